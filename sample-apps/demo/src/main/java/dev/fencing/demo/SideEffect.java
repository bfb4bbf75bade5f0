package dev.fencing.demo;

import dev.fencing.protocol.SqlStates;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One side effect a ledger worker attempted, as it reported it ({@code SIDE <epoch ms> <transfer> <channel>
 * <outcome>}), and what its outcome means. The worker only reports what its libraries told it (a status, an
 * exception, a SQLSTATE); telling "blocked by the agent" from "rejected by a fence" is done here, from the agent's
 * documented exception message and SQLSTATEs.
 */
record SideEffect(String worker, long at, long transfer, String channel, String outcome) {
  static final String JDBC = "jdbc";
  static final String INVENTORY = "http-inventory";
  static final String KAFKA = "kafka";
  static final String WEBHOOK = "webhook";
  /** The webhook notification the transfer's transaction wrote into the outbox (or did not: it rolled back). */
  static final String OUTBOX = "outbox";

  private static final Pattern LINE = Pattern.compile("^SIDE (\\d+) (\\d+) (\\S+) (.*)$", Pattern.MULTILINE);
  private static final Pattern SQLSTATE = Pattern.compile("SQLSTATE=(\\w+)");
  private static final Pattern STALE = Pattern.compile("stale token (\\d+) .*current fence token is (\\d+)");

  static List<SideEffect> parse(String worker, String log) {
    List<SideEffect> effects = new ArrayList<>();
    Matcher m = LINE.matcher(log);
    while (m.find()) {
      effects.add(new SideEffect(worker, Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), m.group(3),
          m.group(4).strip()));
    }
    return effects;
  }

  /** Accepted by its destination: committed, 2xx, or acknowledged by the broker. */
  boolean ok() {
    return outcome.startsWith("OK") || (httpStatus() >= 200 && httpStatus() < 300);
  }

  /**
   * Failed without an answer from the destination (a timeout, a dropped connection): the write may have happened or
   * not. A request in flight when its worker froze times out on the client's clock although the service took it.
   */
  boolean indeterminate() {
    return outcome.startsWith("ERR") && !channel.equals(OUTBOX) && !blockedByAgent() && sqlState() == null
        && httpStatus() < 0;
  }

  /** Stopped by the agent before it left the JVM (FencingBlockedException, or SQLSTATE FN003 for JDBC). */
  boolean blockedByAgent() {
    return outcome.startsWith("ERR") && (outcome.contains("Fencing Agent blocked")
        || outcome.contains("FencingBlockedException") || SqlStates.BLOCKED_BY_AGENT.equals(sqlState()));
  }

  /** The SQLSTATE of a failed JDBC transaction, or null (also when the driver gave none: the worker writes "null"). */
  String sqlState() {
    Matcher m = SQLSTATE.matcher(outcome);
    return m.find() && !m.group(1).equals("null") ? m.group(1) : null;
  }

  /** The HTTP status of an HTTP side effect that got an answer, else -1. */
  int httpStatus() {
    if (channel.equals(JDBC) || channel.equals(KAFKA) || channel.equals(OUTBOX) || outcome.length() < 3) {
      return -1;
    }
    try {
      return Integer.parseInt(outcome.substring(0, 3));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** "stale token 7, fence at 12" from a FN001 message, or null. */
  String staleDetail() {
    Matcher m = STALE.matcher(outcome);
    return m.find() ? "token " + m.group(1) + " < fence token " + m.group(2) : null;
  }

  boolean is(String channelName) {
    return channel.equals(channelName);
  }

  /** What the side effect is, in words. */
  String what() {
    return switch (channel) {
      case JDBC -> "PostgreSQL transfer";
      case INVENTORY -> "POST /reservations";
      case KAFKA -> "Kafka event";
      case WEBHOOK -> "webhook call";
      case OUTBOX -> "webhook via outbox";
      default -> channel;
    };
  }
}
