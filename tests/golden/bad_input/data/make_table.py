#!/usr/bin/env python3
"""Prints the table of docs/bad-input.md from the cases' stated verdicts:
run it from tests/golden/bad_input and paste its output into the doc
(tests/cli/bad_input_test.cpp checks that every case is listed)."""
import glob, json, os, re

WHAT = {
    'lex_bad_character': 'a character outside the grammar',
    'parse_unclosed_call': 'an unclosed call',
    'parse_bad_literal': 'a malformed number',
    'parse_bad_type': 'a malformed type',
    'unknown_name': 'an unknown tensor name',
    'unknown_dtype': 'an unknown dtype',
    'unknown_scalar_op': 'an unknown scalar op',
    'unknown_output': 'an output that is not defined',
    'unknown_index_variable': 'an unknown index variable',
    'duplicate_name': 'a name defined twice',
    'dtype_mismatch': 'operands of two dtypes',
    'shape_mismatch': 'operands of two shapes',
    'declared_type_mismatch': 'a declared type the value does not have',
    'op_arity': 'a scalar op with the wrong operand count',
    'integer_out_of_range': 'an integer beyond int64',
    'no_output': 'no output statement',
    'comments_only': 'nothing but comments',
    'nesting_too_deep': 'expressions nested > 256 deep',
    'index_nesting_too_deep': 'index expressions nested > 256 deep',
    'reduce_bad_shape': 'a reduction over extents the operand lacks',
    'gather_float_index': 'a float index tensor',
    'stx_missing_file': 'no such file',
    'random_input_too_large': 'an input too large to draw (> 2^32 elements)',
    'bottom_div_by_zero': 'integer division by zero',
    'bottom_gather_out_of_range': 'a gather index out of range',
    'bottom_load_out_of_range': 'a load index out of range after wrapping',
    'bottom_view_out_of_range': 'a view index out of range',
    'npy_bad_magic': 'not a .npy file',
    'npy_truncated_header': 'a truncated header',
    'npy_truncated_data': 'fewer data bytes than the shape needs',
    'npy_bad_version': 'an unknown format version',
    'npy_wrong_dtype': 'a dtype the program does not declare',
    'npy_wrong_shape': 'a shape the program does not declare',
    'npy_fortran_2d': 'Fortran order is read; here the shape differs',
    'npy_big_endian': 'big-endian data',
    'npy_unsupported_dtype': 'an unsupported dtype (complex)',
    'npy_u2_without_bf16_name': "'<u2' in a file not named .bf16.npy",
    'npy_not_u2.bf16': "a .bf16.npy file not holding '<u2'",
    'npy_short_descr': 'a truncated descr',
    'npy_no_descr': 'a header without descr',
    'npy_empty_shape': 'an empty shape value',
    'npy_bad_shape': 'a non-integer extent',
    'npy_bad_fortran_order': 'fortran_order neither True nor False',
    'npy_huge_shape': 'more than 2^40 elements',
    'input_file_missing': 'no such file',
    'input_file_is_folder': 'a folder',
    'input_missing': 'an input not given',
    'input_extra': 'a name the program has no input for',
    'input_wrong_dtype_bound': 'a wrong dtype, to stax bound',
    'input_truncated_bench': 'a truncated file, to stax bench',
    'input_spec_without_name': 'no NAME in NAME=FILE',
    'input_spec_without_file': 'no =FILE',
    'graph_bad_syntax': 'not valid JSON (the parser gives line and column)',
    'graph_not_object': 'not a JSON object',
    'graph_missing_nodes': 'no "nodes" array',
    'graph_negative_dim': 'a negative extent',
    'graph_bad_name': 'a name with a character outside [A-Za-z0-9_]',
    'graph_unknown_output': 'an output naming no node',
    'graph_node_without_op': 'a node without "op"',
    'graph_dim_out_of_range': 'a dim out of range for the rank',
    'graph_missing_file': 'no such file',
    'graph_huge_shape': 'an input of more than 2^48 elements, to stax train-step',
    'graph_huge_shape_lower': 'the same, to stax lower (once a crash: int64 overflow in merge-loops)',
    'graph_unknown_op_partition': 'an unknown operator, to stax partition',
    'graph_unknown_op_train_step': 'an unknown operator, to stax train-step',
    'graph_cycle_jvp': 'a cycle, to stax jvp',
    'joint_bad_grads': 'a joint graph whose "grads" is not an object',
    'transform_unknown': 'an unknown transform',
    'transform_empty_name': 'an empty step',
    'transform_param_not_key_value': 'a parameter without =',
    'transform_param_unknown': 'an unknown parameter',
    'transform_param_not_integer': 'a non-integer value',
    'transform_param_out_of_range': 'a value out of range',
    'device_unknown': 'an unknown device',
    'device_bad_property': 'a non-integer property',
    'device_property_out_of_range': 'a property out of range',
    'rewrite_no_arrow': "no '=>'",
    'rewrite_two_arrows': "two '=>'",
    'rewrite_empty_rhs': 'an empty side',
    'rewrite_unclosed_paren': "an unclosed '('",
    'rewrite_unmatched_paren': "an unmatched ')'",
    'rewrite_unknown_op': 'an unknown op',
    'rewrite_bad_dtype': 'a non-float --dtype',
    'rewrite_refuted': 'a false rule: refuted, not bad input',
    'fuzz_report_missing_db': 'no such database',
    'fuzz_report_not_sqlite': 'not SQLite, to fuzz report',
    'fuzz_merge_not_sqlite': 'not SQLite, to fuzz merge',
    'fuzz_db_not_sqlite': 'not SQLite, to a campaign',
    'fuzz_unknown_mutant': 'an unknown --mutant',
    'fuzz_unknown_backend': 'an unknown --backends entry',
    'fuzz_bench_unknown': 'an unknown bench',
    'fuzz_zero_iteration_timeout': 'a zero --iteration-timeout (once: every program a hang finding)',
    'fuzz_report_db_is_folder': 'a folder, not a database',
    'mathcheck_bad_resume': 'a malformed --resume state file',
    'torch_check_untraced': 'a folder without eager/ or compiled/ (not traced)',
    'torch_check_bad_model': 'an unknown --model',
    'torch_check_bad_trace_json': 'a trace.json that is not an object',
    'torch_check_missing_input': "a graph input's .npy missing",
    'torch_check_no_graph': 'no graph.json',
    'fuzz_torch_no_budget': 'a torch target without --count or --time',
    'fuzz_torch_unknown_target': 'an unknown --target',
    'mathcheck_unknown_function': 'an unknown function',
    'run_bad_semantics': 'an unknown --semantics',
    'run_bad_backend': 'an unknown --backend',
    'run_bad_arch': 'a bad --arch',
    'run_bad_precision': '--precision out of range',
    'bench_special_fraction_range': '--special-fraction out of range',
    'bench_chain_bytes_range': '--chain-bytes out of range',
    'tv_bad_class': 'an unknown --class',
    'tv_interface_mismatch': 'programs with different inputs: refuted',
    'bound_bad_data': 'an unknown --data',
    'checkpoint_zero_steps': '--steps 0',
    'checkpoint_bad_schedule': 'an unknown --schedule',
    'checkpoint_too_few_reps': 'too few --reps for the slots',
    'partition_unknown_strategy': 'an unknown --strategy',
    'experiment_unknown': 'an unknown experiment',
    'experiment_bad_examples': 'an --examples folder without the graphs (once on stdout)',
    'examples_missing_folder': 'no such folder',
    'subcommand_unknown': 'an unknown subcommand',
    'option_unknown': 'an unknown option',
}

GROUPS = [
    ('`.stx` program', lambda n: n.endswith('.stx') and not n.startswith('bottom_') or n == 'stx_missing_file.case'),
    ('`.stx` program at run time (⊥)', lambda n: n.startswith('bottom_')),
    ('`--input NAME=FILE.npy`', lambda n: n.startswith('npy_') or n.startswith('input_')),
    ('graph JSON',
     lambda n: n.startswith('graph_') or n.startswith('joint_')),
    ('`--transform` pipeline', lambda n: n.startswith('transform_')),
    ('`--device` (`lower`)', lambda n: n.startswith('device_')),
    ("`stax rewrite 'LHS => RHS'`", lambda n: n.startswith('rewrite_')),
    ('campaign database, `stax fuzz`', lambda n: n.startswith('fuzz_')),
    ('`--resume` state, `stax mathcheck`', lambda n: n.startswith('mathcheck_')),
    ('trace folder, `stax torch-check`', lambda n: n.startswith('torch_check_')),
    ('other options and names', lambda n: True),
]


def header(path):
    return open(path, encoding='utf-8').readline().strip()


def row(kind, what, files, line):
    m = re.match(r'# expect: exit (\d), (stdout|stderr): (.*)$', line)
    code, stream, text = m.groups()
    text = text.replace('|', '\\|')
    if len(text) > 100:
        text = text[:97] + '...'
    return '| %s | %s | %s | %s | %s: `%s` |' % (kind, what, files, code, stream, text)


def main():
    cases = []
    for f in sorted(os.listdir('.')):
        if f.endswith('.stx') or f.endswith('.case'):
            cases.append((f, f, header(f)))
        elif f.endswith('.expect'):
            cases.append((f, f[:-7], header(f)))
    print('| input | malformed how | case | exit | first line of the message |')
    print('|---|---|---|---|---|')
    done = set()
    for kind, pred in GROUPS:
        for f, subject, line in cases:
            if f in done or not pred(f):
                continue
            done.add(f)
            stem = re.sub(r'\.(stx|case|json|npy)$', '', subject)
            print(row(kind, WHAT.get(stem, stem.replace('_', ' ')), '`bad_input/%s`' % subject,
                      line.replace('{case}', 'bad_input/' + subject)))
    for folder, cmd in (('compiler', 'stax lower'), ('autodiff', 'stax grad --wrt')):
        for f in sorted(glob.glob('../%s/*.json' % folder)):
            t = open(f).read()
            m = re.search(r'"expect": "([^"]*)"', t)
            if m:
                print('| graph JSON (`%s`) | %s | `%s/%s` | 2 | stderr: `%s/%s: error: ...%s` |' % (
                    cmd, os.path.basename(f)[:-5].replace('_', ' '), folder, os.path.basename(f), folder,
                    os.path.basename(f), m.group(1).replace('|', '\\|')))


main()
