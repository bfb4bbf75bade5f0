-- The outbox relay's statements on MariaDB (10.6 and later: SKIP LOCKED). {table} is the outbox table, {ids} a list of ? (one per event id).
-- Times are the database's clock in UTC (UTC_TIMESTAMP(6), as the outbox's insert trigger writes them), whatever the
-- session's time zone. The relay runs each statement as it stands here (see OutboxDialect).

-- name: candidates
-- The batch to claim, locked: committed pending events that are due, unclaimed or with an expired claim, and first of
-- their ordering key: the key's previous event (key_seq has no gaps) is delivered, or gone. An event is only ever
-- delivered after its previous one, so the previous one is enough to look at. Earliest due first, in the order of the
-- pending index (state, next_attempt_at), so that the scan stops after the batch instead of sorting every pending
-- event. SKIP LOCKED: rows another relay is claiming at this moment are passed over, and this relay takes the next
-- ones. It locks the rows it returns; the previous events it looks at are read without a lock (READ COMMITTED).
-- parameters: batch size.
SELECT o.event_id, o.lock_name, o.token, o.grant_id, o.channel, o.target, o.method, o.message_key, o.headers, o.payload,
       o.attempts
  FROM {table} o
 WHERE o.state = 'pending'
   AND o.next_attempt_at <= UTC_TIMESTAMP(6)
   AND (o.claimed_until IS NULL OR o.claimed_until < UTC_TIMESTAMP(6))
   AND NOT EXISTS (SELECT 1 FROM {table} e
                    WHERE e.order_key = o.order_key AND e.key_seq = o.key_seq - 1 AND e.state <> 'delivered')
 ORDER BY o.next_attempt_at
 LIMIT ?
   FOR UPDATE SKIP LOCKED;

-- name: candidates-all = candidates
-- The relay runs it when the last claim found fewer events than a batch; here it is the same statement.

-- name: claim
-- parameters: relay id, claim duration in milliseconds, the event ids.
UPDATE {table}
   SET claimed_by = ?, claimed_until = DATE_ADD(UTC_TIMESTAMP(6), INTERVAL ? * 1000 MICROSECOND)
 WHERE event_id IN ({ids});

-- name: delivered
-- parameters: relay id, the event ids. Only the events whose claim this relay still holds.
UPDATE {table}
   SET state = 'delivered', attempts = attempts + 1, delivered_at = UTC_TIMESTAMP(6),
       claimed_by = NULL, claimed_until = NULL
 WHERE claimed_by = ? AND state = 'pending' AND event_id IN ({ids});

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
