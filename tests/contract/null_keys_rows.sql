-- The rows for the contract executor (fixtures/plan/null_sort_keys_typed): tasks without a due
-- date or a priority, runs without a batch and events without a time, among the others, so that
-- every listing's NULLs come where SQL puts them.
INSERT INTO tasks SELECT i, 1 + i % 4, 'task ' || i,
    CASE WHEN i % 9 = 0 THEN NULL ELSE date '2026-01-01' + i % 40 END,
    CASE WHEN i % 7 = 0 THEN NULL ELSE i % 5 END
  FROM generate_series(1, 200) i;
INSERT INTO runs SELECT i, 1 + i % 3, CASE WHEN i % 10 = 0 THEN NULL ELSE i % 6 END, 'ok'
  FROM generate_series(1, 150) i;
INSERT INTO events SELECT i, 1 + i % 5,
    CASE WHEN i % 8 = 0 THEN NULL ELSE timestamptz '2026-03-01 00:00:00+00' + i * interval '1.5 second' END,
    'kind ' || i % 3
  FROM generate_series(1, 200) i;
