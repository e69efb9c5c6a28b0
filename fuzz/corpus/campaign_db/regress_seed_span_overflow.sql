CREATE TABLE params(key, valu¤);
CREATE TABLE meta(key, value);
CREATE TABLE runs(seed, pipeline, cls, status, backends, note, backend_skipped,ÿ t_generate, t_transform, t_chec$$$$$$$$$$$$$$$$$$$$$$$$$$$$$$$$$$$$$$$$$$$$$$$$k, t_backends, t_shrink, t_prove);
CREATE TABLE findings(seed, kind, component, pipeline, cls, message, mutant, found_after, program, repro, command, size_before, size_after, shrink_tests);
CREATE TABLE finding_files(seed, name, data);
INSERT INTO params VALUES(NULL, NULL),('seed', -2),('count', 'many');
INSERT INTO meta VALUES('elapsed', 'x');
INSERT INTO runs VALUES(~'abc', NULL, NULL, NULL, NULL, NULL, 'yes', 'a', NULL, X'00', NULL, NULL, NULL);
INSERT INTO runs VALUES(9223372036854775807, ',,,', ':', '', ',', NULL, -1, -1e308, 1e308, NULL, NULL, NULL, 'nan');
INSERT INTO findings VALUES(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO finding_files VALUES(-1, '../escape.npy', X'00');
INSERT INTO finding_files VALUES(-1, '/tmp/absolute.npy', X'00');
INSERT INTO finding_files VALUES(-1, '', NULL);

