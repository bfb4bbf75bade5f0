-- The outbox relay's statements on H2. {table} is the outbox table, {ids} a list of ? (one per event id).
-- Times are the database's clock. The relay runs each statement as it stands here (see OutboxDialect).

-- name: candidates
-- The batch to claim, locked: committed pending events that are due, unclaimed or with an expired claim, and first of
-- their ordering key: the key's previous event (key_seq has no gaps) is delivered, or gone. An event is only ever
-- delivered after its previous one, so the previous one is enough to look at: one lookup in the (order_key, key_seq)
-- index. Earliest due first, in the order of the pending index, so that the scan stops after the batch instead of
-- sorting every pending event. SKIP LOCKED: rows another relay is claiming at this moment are passed over, and this
-- relay takes the next ones. It locks the rows it returns; the previous events it looks at are read without a lock.
-- parameters: batch size.
SELECT o.event_id, o.lock_name, o.token, o.grant_id, o.channel, o.target, o.method, o.message_key, o.headers, o.payload,
       o.attempts
  FROM {table} o
 WHERE o.state = 'pending'
   AND o.next_attempt_at <= CURRENT_TIMESTAMP
   AND (o.claimed_until IS NULL OR o.claimed_until < CURRENT_TIMESTAMP)
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
   SET claimed_by = ?, claimed_until = DATEADD(MILLISECOND, ?, CURRENT_TIMESTAMP)
 WHERE event_id IN ({ids});

-- name: delivered
-- parameters: relay id, the event ids. Only the events whose claim this relay still holds.
UPDATE {table}
   SET state = 'delivered', attempts = attempts + 1, delivered_at = CURRENT_TIMESTAMP,
       claimed_by = NULL, claimed_until = NULL
 WHERE claimed_by = ? AND state = 'pending' AND event_id IN ({ids});

-- name: failed
-- parameters: new state (pending or parked), attempts, error, backoff in milliseconds, event id, relay id.
UPDATE {table}
   SET state = ?, attempts = ?, last_error = ?, next_attempt_at = DATEADD(MILLISECOND, ?, CURRENT_TIMESTAMP),
       claimed_by = NULL, claimed_until = NULL
 WHERE event_id = ? AND claimed_by = ? AND state = 'pending';

-- name: pending
-- The pending events and the age in seconds of the oldest (NULL when none).
SELECT count(*), DATEDIFF(MILLISECOND, min(created_at), CURRENT_TIMESTAMP) / 1000.0
  FROM {table}
 WHERE state = 'pending';

-- name: parked
SELECT count(*) FROM {table} WHERE state = 'parked';
