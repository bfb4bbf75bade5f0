-- The outbox relay's statements on MariaDB (10.6 and later: SKIP LOCKED). {table} is the outbox table, {ids} a list of ? (one per event id).
-- Times are the database's clock in UTC (UTC_TIMESTAMP(6), as the outbox's insert trigger writes them), whatever the
-- session's time zone. The relay runs each statement as it stands here (see OutboxDialect).

-- name: candidates
-- Committed pending events that are due, unclaimed or with an expired claim, and first of their ordering key: the
-- key's previous event (key_seq has no gaps) is delivered, or gone. An event is only ever delivered after its
-- previous one, so the previous one is enough to look at: one lookup in the (order_key, key_seq) index. A plain
-- read: it takes no lock.
SELECT o.event_id
  FROM {table} o
 WHERE o.state = 'pending'
   AND o.next_attempt_at <= UTC_TIMESTAMP(6)
   AND (o.claimed_until IS NULL OR o.claimed_until < UTC_TIMESTAMP(6))
   AND NOT EXISTS (SELECT 1 FROM {table} e
                    WHERE e.order_key = o.order_key AND e.key_seq = o.key_seq - 1 AND e.state <> 'delivered')
 ORDER BY o.created_at, o.key_seq
 LIMIT ?;

-- name: lock
-- Locks the candidates no other relay is claiming right now, and that are still claimable.
SELECT event_id, lock_name, token, grant_id, channel, target, method, message_key, headers, payload, attempts
  FROM {table}
 WHERE event_id IN ({ids})
   AND state = 'pending'
   AND (claimed_until IS NULL OR claimed_until < UTC_TIMESTAMP(6))
   FOR UPDATE SKIP LOCKED;

-- name: claim
-- parameters: relay id, claim duration in milliseconds, the event ids.
UPDATE {table}
   SET claimed_by = ?, claimed_until = DATE_ADD(UTC_TIMESTAMP(6), INTERVAL ? * 1000 MICROSECOND)
 WHERE event_id IN ({ids});

-- name: delivered
-- parameters: event id, relay id. Only while this relay still holds the claim.
UPDATE {table}
   SET state = 'delivered', attempts = attempts + 1, delivered_at = UTC_TIMESTAMP(6),
       claimed_by = NULL, claimed_until = NULL
 WHERE event_id = ? AND claimed_by = ? AND state = 'pending';

-- name: failed
-- parameters: new state (pending or parked), attempts, error, backoff in milliseconds, event id, relay id.
UPDATE {table}
   SET state = ?, attempts = ?, last_error = ?,
       next_attempt_at = DATE_ADD(UTC_TIMESTAMP(6), INTERVAL ? * 1000 MICROSECOND),
       claimed_by = NULL, claimed_until = NULL
 WHERE event_id = ? AND claimed_by = ? AND state = 'pending';

-- name: pending
-- The pending events and the age in seconds of the oldest (NULL when none).
SELECT count(*), TIMESTAMPDIFF(MICROSECOND, min(created_at), UTC_TIMESTAMP(6)) / 1000000.0
  FROM {table}
 WHERE state = 'pending';

-- name: parked
SELECT count(*) FROM {table} WHERE state = 'parked';
