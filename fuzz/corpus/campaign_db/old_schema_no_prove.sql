CREATE TABLE params(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE meta(key TEXT PRIMARY KEY, value REAL);
CREATE TABLE runs(seed INTEGER PRIMARY KEY, pipeline TEXT, cls TEXT, status TEXT, backends TEXT,
  note TEXT, backend_skipped INTEGER, t_generate REAL, t_transform REAL, t_check REAL, t_backends REAL, t_shrink REAL);
CREATE TABLE findings(seed INTEGER PRIMARY KEY, kind TEXT, component TEXT, pipeline TEXT, cls TEXT,
  message TEXT, mutant TEXT, found_after REAL, program TEXT, repro TEXT, command TEXT, size_before INTEGER,
  size_after INTEGER, shrink_tests INTEGER);
CREATE TABLE finding_files(seed INTEGER, name TEXT, data BLOB, PRIMARY KEY(seed, name));
INSERT INTO params VALUES('seed','0'),('count','3'),('mutant','');
INSERT INTO meta VALUES('elapsed',1.5);
INSERT INTO runs VALUES(0,'cse','exact','tested','interp','',0,0.001,0.002,0.003,0.0,0.0);
INSERT INTO runs VALUES(1,'split-reduction:k=2,pairwise','real','tested','interp,cpu','',0,0.001,0.002,0.003,0.01,0.0);
INSERT INTO runs VALUES(2,'dce','exact','finding','interp','',0,0.001,0.002,0.003,0.0,0.5);
INSERT INTO findings VALUES(2,'transform','dce','dce','exact','bits differ','',0.9,'input x : f32[2]
let y = map(fn(a) => a, x)
output y','input x : f32[2]
output x','stax check repro.stx --transform dce',3,2,10);
INSERT INTO finding_files VALUES(2,'x.npy',X'934e554d5059');
