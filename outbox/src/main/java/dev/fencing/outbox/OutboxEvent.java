package dev.fencing.outbox;

import dev.fencing.protocol.OutboxSchema;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * One claimed event as the relay delivers it: the row's destination, payload and the fencing values the table's
 * trigger stored when the writing transaction inserted it.
 *
 * @param token the writing session's token, NULL when the table let a write without one through
 * @param attempts delivery attempts made before this one
 */
record OutboxEvent(String eventId, String lock, Long token, String grant, String channel, String target,
    String method, String messageKey, String headers, String payload, int attempts) {

  static OutboxEvent read(ResultSet rs) throws SQLException {
    long value = rs.getLong(OutboxSchema.TOKEN);
    Long token = rs.wasNull() ? null : value;
    return new OutboxEvent(rs.getString(OutboxSchema.EVENT_ID), rs.getString(OutboxSchema.LOCK), token,
        rs.getString(OutboxSchema.GRANT), rs.getString(OutboxSchema.CHANNEL), rs.getString(OutboxSchema.TARGET),
        rs.getString(OutboxSchema.METHOD), rs.getString(OutboxSchema.MESSAGE_KEY), rs.getString(OutboxSchema.HEADERS), rs.getString(OutboxSchema.PAYLOAD), rs.getInt(OutboxSchema.ATTEMPTS));
  }
}
