package dev.fencing.agent.status;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.instrumentation.api.DestinationInventory;
import java.time.Instant;
import java.util.List;

/**
 * The {@code inventory} object of GET /status: every destination the JVM's side effects went to, one entry per
 * (destination, lock), in the order first seen (docs/reference/readiness-report.md).
 */
final class InventoryJson {
  private InventoryJson() {}

  static void append(StringBuilder sb, DestinationInventory inventory, String mode) {
    sb.append(",\"inventory\":{\"mode\":");
    StatusJson.string(sb, mode);
    sb.append(",\"maxDestinations\":").append(inventory.maxDestinations());
    sb.append(",\"overflowTotal\":").append(inventory.overflow());
    sb.append(",\"destinations\":[");
    boolean first = true;
    for (DestinationInventory.Destination d : inventory.destinations()) {
      for (DestinationInventory.PerLock p : d.locks()) {
        sb.append(first ? "{" : ",{");
        first = false;
        entry(sb, inventory, d, p);
        sb.append('}');
      }
    }
    sb.append("]}");
  }

  private static void entry(StringBuilder sb, DestinationInventory inventory, DestinationInventory.Destination d,
      DestinationInventory.PerLock p) {
    sb.append("\"lock\":");
    StatusJson.string(sb, p.lock());
    sb.append(",\"channel\":");
    StatusJson.string(sb, d.channel().label());
    sb.append(",\"destination\":");
    StatusJson.string(sb, d.address());
    if (d.channel() == Channel.JDBC) {
      sb.append(",\"table\":");
      StatusJson.string(sb, d.table());
      sb.append(",\"driverJar\":");
      StatusJson.string(sb, d.driverJar());
    }
    sb.append(",\"status\":");
    StatusJson.string(sb, d.status().label());
    if (d.channel() == Channel.HTTP) {
      sb.append(",\"methods\":[");
      List<String> methods = inventory.methods(p);
      for (int i = 0; i < methods.size(); i++) {
        sb.append(i == 0 ? "" : ",");
        StatusJson.string(sb, methods.get(i));
      }
      sb.append(']');
    }
    sb.append(",\"tagged\":").append(p.tagged());
    sb.append(",\"passed\":").append(p.passed());
    sb.append(",\"wouldBlock\":").append(p.wouldBlock());
    sb.append(",\"blocked\":").append(p.blocked());
    sb.append(",\"exempt\":").append(p.exempt());
    sb.append(",\"rejections\":").append(p.rejections());
    if (d.channel() == Channel.JDBC) {
      sb.append(",\"blockedCommits\":").append(p.blockedCommits());
    }
    if (d.channel() == Channel.KAFKA) {
      sb.append(",\"failedBatches\":").append(p.failedBatches());
      sb.append(",\"failedRecords\":").append(p.failedRecords());
    }
    sb.append(",\"exemptByCaller\":{");
    boolean first = true;
    for (java.util.Map.Entry<String, Long> e : p.exemptByCaller().entrySet()) {
      sb.append(first ? "" : ",");
      first = false;
      StatusJson.string(sb, e.getKey());
      sb.append(':').append(e.getValue());
    }
    sb.append('}');
    sb.append(",\"firstSeen\":");
    StatusJson.string(sb, Instant.ofEpochMilli(p.firstSeenMillis()).toString());
    sb.append(",\"lastSeen\":");
    StatusJson.string(sb, Instant.ofEpochMilli(p.lastSeenMillis()).toString());
  }
}
