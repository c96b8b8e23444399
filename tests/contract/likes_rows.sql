-- The likes rows for the contract executor (fixtures/plan/counters-read-heavy): 60 posts, post i
-- liked by (i * 7) % 23 users (some by none), each like at its own second.
INSERT INTO posts SELECT i, 1 + i % 5, 'Post ' || i, now() - i * interval '1 hour'
  FROM generate_series(1, 60) i;
INSERT INTO likes SELECT p, u, now() - (p * 100 + u) * interval '1 second'
  FROM generate_series(1, 60) p, generate_series(1, 22) u WHERE u <= (p * 7) % 23;
