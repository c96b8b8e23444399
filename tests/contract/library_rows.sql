-- The library rows for the contract executor: 4 branches in 3 cities (two in Paris), 40 members,
-- 400 books on 8 shelves due 20 days either side of today, each at its own minute (no ties in
-- ORDER BY due_at: a LIMIT then has one right answer), every fifth without holds.
INSERT INTO branches VALUES (1, 'Paris'), (2, 'Lyon'), (3, 'Paris'), (4, 'Nantes');
INSERT INTO members SELECT i, 'm' || i || '@example.org', lpad((i * 7919 % 10000)::text, 4, '0'),
    1 + i % 4, 'Member ' || i FROM generate_series(1, 40) i;
INSERT INTO books SELECT i, 'shelf-' || (i % 8), 'Title ' || i, 1 + (i * 7) % 4,
    date_trunc('day', now()) + ((i * 37) % 41 - 20) * interval '1 day' + i * interval '1 minute',
    CASE WHEN i % 5 = 0 THEN NULL ELSE i % 9 END, 'About book ' || i
  FROM generate_series(1, 400) i;
