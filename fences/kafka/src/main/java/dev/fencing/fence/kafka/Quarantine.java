package dev.fencing.fence.kafka;

import dev.fencing.protocol.Rejection;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * A record the fence refused: why ({@code reason}, {@code detail}), under which lock label, and for a stale token the
 * fence token that beat it ({@code current}, else 0). {@code token} is 0 when none was read.
 */
public record Quarantine(ConsumerRecord<?, ?> record, String lockLabel, Rejection reason, String detail, long token,
    long current) {
}
