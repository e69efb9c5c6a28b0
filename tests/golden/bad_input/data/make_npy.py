#!/usr/bin/env python3
"""Writes the .npy files of tests/golden/bad_input (no NumPy needed): run it
from that folder. Each file is small and malformed in one way."""
import struct


def npy(path, descr='<f4', shape=(4,), data=None, header=None, version=1, raw=None, fortran='False'):
    if raw is None:
        if header is None:
            sh = '(' + ', '.join(str(d) for d in shape) + (',' if len(shape) == 1 else '') + ')'
            header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, sh)
        pad = (64 - (10 + len(header) + 1) % 64) % 64
        h = header + ' ' * pad + '\n'
        raw = b'\x93NUMPY' + bytes([version, 0]) + struct.pack('<H', len(h)) + h.encode('latin1')
        raw += data if data is not None else bytes(16)
    with open(path, 'wb') as f:
        f.write(raw)


# Companions: a good f32[4] and the i64 indices of data/gather.stx.
npy('data/f32x4.npy', data=struct.pack('<4f', 1, 2, 3, 4))
npy('data/idx_in_range.npy', '<i8', data=struct.pack('<4q', 0, 1, 2, -1))
npy('data/idx_out_of_range.npy', '<i8', data=struct.pack('<4q', 0, 1, 9, -1))
npy('data/idx_negative_out_of_range.npy', '<i8', data=struct.pack('<4q', 0, -5, 2, 3))
# The cases (each has a sidecar FILE.expect).
npy('npy_bad_magic.npy', raw=b'PK\x03\x04 a zip file, not a .npy file')
npy('npy_truncated_header.npy', raw=b'\x93NUMPY\x01\x00\xff\x00{')
npy('npy_truncated_data.npy', data=bytes(12))
npy('npy_bad_version.npy', version=9)
npy('npy_wrong_dtype.npy', '<f8', data=bytes(32))
npy('npy_wrong_shape.npy', shape=(5,), data=bytes(20))
npy('npy_fortran_2d.npy', shape=(2, 2), fortran='True')
npy('npy_big_endian.npy', '>f4')
npy('npy_unsupported_dtype.npy', '<c8', data=bytes(32))
npy('npy_u2_without_bf16_name.npy', '<u2', data=bytes(8))
npy('npy_not_u2.bf16.npy', '<f4')
npy('npy_short_descr.npy', '<f')
npy('npy_no_descr.npy', header="{'fortran_order': False, 'shape': (4,), }")
npy('npy_empty_shape.npy', header="{'descr': '<f4', 'fortran_order': False, 'shape': , }")
npy('npy_bad_shape.npy', header="{'descr': '<f4', 'fortran_order': False, 'shape': (4, x), }")
npy('npy_bad_fortran_order.npy', header="{'descr': '<f4', 'fortran_order': Maybe, 'shape': (4,), }")
npy('npy_huge_shape.npy', '<f8', shape=(1 << 40, 1 << 40))
