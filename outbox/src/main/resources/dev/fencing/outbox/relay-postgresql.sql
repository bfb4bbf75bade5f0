-- The outbox relay's statements on PostgreSQL. {table} is the outbox table, {ids} a list of ? (one per event id).
-- Times are the database's clock. The relay runs each statement as it stands here (see OutboxDialect).

-- name: candidates
-- The batch to claim, locked: committed pending events that are due, unclaimed or with an expired claim, and first of
-- their ordering key: the key's previous event (key_seq has no gaps) is delivered, or gone. An event is only ever
-- delivered after its previous one, so the previous one is enough to look at: one lookup in the (order_key, key_seq)
-- index. Earliest due first, in the order of the pending index, so that the scan stops after the batch instead of
-- sorting every pending event. SKIP LOCKED: rows another relay is claiming at this moment are passed over, and this
-- relay takes the next ones. It locks the rows it returns (FOR UPDATE OF o), not the previous events it looks at.
-- parameters: batch size.
SELECT o.event_id, o.lock_name, o.token, o.grant_id, o.channel, o.target, o.method, o.message_key, o.headers, o.payload,
       o.attempts
  FROM {table} o
 WHERE o.state = 'pending'
   AND o.next_attempt_at <= now()
   AND (o.claimed_until IS NULL OR o.claimed_until < now())
   AND NOT EXISTS (SELECT 1 FROM {table} e
                    WHERE e.order_key = o.order_key AND e.key_seq = o.key_seq - 1 AND e.state <> 'delivered')
 ORDER BY o.next_attempt_at
 LIMIT ?
   FOR UPDATE OF o SKIP LOCKED;

-- name: candidates-all
-- The same batch, when the last claim found fewer events than a batch: the scan of candidates then went through
-- every due pending event anyway (a backlog behind few keys), and one pass over them with a hash of the previous
-- events is cheaper than a lookup per event. Oldest first; the sort takes every due pending event.
-- parameters: batch size.
SELECT o.event_id, o.lock_name, o.token, o.grant_id, o.channel, o.target, o.method, o.message_key, o.headers, o.payload,
       o.attempts
  FROM {table} o
 WHERE o.state = 'pending'
   AND o.next_attempt_at <= now()
   AND (o.claimed_until IS NULL OR o.claimed_until < now())
   AND NOT EXISTS (SELECT 1 FROM {table} e
                    WHERE e.order_key = o.order_key AND e.key_seq = o.key_seq - 1 AND e.state <> 'delivered')
 ORDER BY o.created_at, o.key_seq
 LIMIT ?
   FOR UPDATE OF o SKIP LOCKED;

-- name: claim
-- parameters: relay id, claim duration in milliseconds, the event ids.
UPDATE {table}
   SET claimed_by = ?, claimed_until = now() + ? * interval '1 millisecond'
 WHERE event_id IN ({ids});

-- name: delivered
-- parameters: relay id, the event ids. Only the events whose claim this relay still holds.
UPDATE {table}
   SET state = 'delivered', attempts = attempts + 1, delivered_at = now(),
       claimed_by = NULL, claimed_until = NULL
 WHERE claimed_by = ? AND state = 'pending' AND event_id IN ({ids});

-- name: failed
-- parameters: new state (pending or parked), attempts, error, backoff in milliseconds, event id, relay id.
UPDATE {table}
   SET state = ?, attempts = ?, last_error = ?, next_attempt_at = now() + ? * interval '1 millisecond',
       claimed_by = NULL, claimed_until = NULL
 WHERE event_id = ? AND claimed_by = ? AND state = 'pending';

-- name: missing_rights
-- The rights the relay needs on the table and its user lacks (parameters: the table, twice): SELECT, and UPDATE of
-- each delivery column (a locking read needs UPDATE of a column too). Any user may ask.
SELECT r.name
  FROM (VALUES (1, 'SELECT', NULL), (2, 'UPDATE (state)', 'state'), (3, 'UPDATE (attempts)', 'attempts'),
               (4, 'UPDATE (next_attempt_at)', 'next_attempt_at'), (5, 'UPDATE (delivered_at)', 'delivered_at'),
               (6, 'UPDATE (last_error)', 'last_error'), (7, 'UPDATE (claimed_by)', 'claimed_by'),
               (8, 'UPDATE (claimed_until)', 'claimed_until')) AS r(n, name, col)
 WHERE NOT CASE WHEN r.col IS NULL THEN has_table_privilege(?, 'SELECT')
                ELSE has_column_privilege(?, r.col, 'UPDATE') END
 ORDER BY r.n;

-- name: pending
-- The pending events and the age in seconds of the oldest (NULL when none).
SELECT count(*), EXTRACT(EPOCH FROM now() - min(created_at))
  FROM {table}
 WHERE state = 'pending';

-- name: parked
SELECT count(*) FROM {table} WHERE state = 'parked';
