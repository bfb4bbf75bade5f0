package dev.fencing.agent.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReadinessReportTest {
  static final String URL = "jdbc:postgresql://127.0.0.1:5432/app?user=app";

  /** A /status document as the agent writes it (fields beyond the inventory trimmed). */
  static final String STATUS = "{\"lock\":\"ledger\",\"state\":\"HOLDING\",\"inventory\":{\"mode\":\"observe\","
      + "\"maxDestinations\":500,\"overflowTotal\":0,\"destinations\":["
      + row("ledger", "jdbc", URL, "\"table\":\"orders\",\"driverJar\":\"/opt/lib/postgresql.jar\"", "unfenced", 3, 1)
      + "," + row("ledger", "jdbc", URL, "\"table\":\"payments\",\"driverJar\":null", "fenced", 2, 0)
      + "," + row("ledger", "jdbc", URL, "\"table\":\"(no single table)\",\"driverJar\":null", "unfenced", 1, 0)
      + "," + row("ledger", "http", "http://127.0.0.1:8081", "\"methods\":[\"POST\",\"PUT\"]", "unfenced", 4, 4)
      + "," + row("ledger", "http", "http://127.0.0.1:8082", "\"methods\":[\"POST\"]", "fenced", 1, 0)
      + "," + row("ledger", "kafka", "events", null, "unfenced", 5, 0)
      + "," + row("none", "kafka", "audit", null, "unfenced", 2, 0)
      + "," + row("ledger", "http", "http://otel:4318", "\"methods\":[\"POST\"]", "exempt", 0, 0)
      + "]}}";

  private static String row(String lock, String channel, String dest, String extra, String status, long tagged,
      long wouldBlock) {
    return "{\"lock\":\"" + lock + "\",\"channel\":\"" + channel + "\",\"destination\":\"" + dest + "\","
        + (extra == null ? "" : extra + ",") + "\"status\":\"" + status + "\",\"tagged\":" + tagged
        + ",\"passed\":0,\"wouldBlock\":" + wouldBlock + ",\"blocked\":0,\"exempt\":"
        + ("exempt".equals(status) ? 6 : 0) + ",\"rejections\":0,\"firstSeen\":\"2026-12-05T18:00:00Z\","
        + "\"lastSeen\":\"2026-12-05T18:01:00Z\"}";
  }

  @Test
  void printsEveryDestinationAsATableRow() {
    String text = ReadinessReport.of(JsonText.parse(STATUS)).text();
    assertThat(text).startsWith("Fencing readiness: mode observe, 8 destinations per lock, 4 reached unfenced under "
        + "a lock\n");
    assertThat(text).containsPattern("(?m)^LOCK +CHANNEL +DESTINATION +TABLE/METHODS +STATUS +TAGGED +PASSED "
        + "+WOULD_BLOCK +BLOCKED +EXEMPT +REJECTED +LAST SEEN$");
    assertThat(text).containsPattern("(?m)^ledger +jdbc +" + java.util.regex.Pattern.quote(URL)
        + " +orders +unfenced +3 +0 +1 +0 +0 +0 +2026-12-05T18:01:00Z$");
    assertThat(text).containsPattern("(?m)^ledger +http +http://127.0.0.1:8081 +POST,PUT +unfenced +4 ");
    assertThat(text).containsPattern("(?m)^none +kafka +audit +unfenced +2 ");
  }

  @Test
  void saysWhatToDoForEachUnfencedDestinationOfALockAndListsTheExemptions() {
    String text = ReadinessReport.of(JsonText.parse(STATUS)).text();
    assertThat(text).contains("  - unfenced table orders of " + URL + " written under lock 'ledger' (1 would have "
        + "been blocked in enforce mode): install the SQL fence: java -jar fencing-agent.jar sql install "
        + "--jdbc-url '" + URL + "' --driver-jar /opt/lib/postgresql.jar --table orders --lock ledger\n");
    assertThat(text).contains("  - lock 'ledger' writes to " + URL + " with statements no fence can judge");
    assertThat(text).contains("  - unfenced HTTP service http://127.0.0.1:8081 (POST, PUT) called under lock "
        + "'ledger' (4 would have been blocked in enforce mode): put the HTTP fence (fences/http) in front of it");
    assertThat(text).contains("or send these requests through a tokened outbox");
    assertThat(text).contains("  - unfenced topic events written under lock 'ledger': add the Kafka consumer fence "
        + "(fences/kafka)");
    assertThat(text).doesNotContain("topic audit").doesNotContain("payments of").doesNotContain("8082 (");
    assertThat(text).contains("Exemptions that matched:\n  - exempt: HTTP service http://otel:4318 matched "
        + "fencing.exempt.http (6 side effects sent untagged, never blocked)");
  }

  @Test
  void theJsonFormCarriesTheGateVerdictAndTheCommands() {
    ReadinessReport report = ReadinessReport.of(JsonText.parse(STATUS));
    Map<?, ?> json = (Map<?, ?>) JsonText.parse(report.json());
    assertThat(json.get("ready")).isEqualTo(false);
    assertThat(json.get("leaderOnlyUnfenced")).isEqualTo(4L);
    Map<?, ?> orders = (Map<?, ?>) ((java.util.List<?>) json.get("destinations")).get(0);
    assertThat(orders.get("command")).isEqualTo("java -jar fencing-agent.jar sql install --jdbc-url '" + URL
        + "' --driver-jar /opt/lib/postgresql.jar --table orders --lock ledger");
    assertThat(orders.get("wouldBlock")).isEqualTo(1L);
    assertThat(report.leaderOnlyUnfenced()).extracting(ReadinessReport.Row::destination)
        .containsExactly(URL, URL, "http://127.0.0.1:8081", "events");
  }

  @Test
  void everythingFencedInObserveModeSaysToSwitchToEnforce() {
    String status = "{\"inventory\":{\"mode\":\"observe\",\"maxDestinations\":500,\"overflowTotal\":0,"
        + "\"destinations\":[" + row("ledger", "kafka", "events", null, "fenced", 5, 0) + "]}}";
    ReadinessReport report = ReadinessReport.of(JsonText.parse(status));
    assertThat(report.text()).contains("Every destination written under a lock is fenced: switch to "
        + "fencing.mode=enforce.");
    assertThat(report.leaderOnlyUnfenced()).isEmpty();
  }

  @Test
  void quotesWhatAShellWouldSplit() {
    assertThat(ReadinessReport.shellQuote("jdbc:postgresql://h/db?user=u&ssl=true"))
        .isEqualTo("'jdbc:postgresql://h/db?user=u&ssl=true'");
    assertThat(ReadinessReport.shellQuote("it's")).isEqualTo("'it'\\''s'");
  }

  @Test
  void aDocumentThatIsNoStatusIsRefusedSayingWhatIsExpected() {
    assertThatThrownBy(() -> ReadinessReport.of(JsonText.parse("[1,2]")))
        .hasMessage("not an agent's /status document: expected a JSON object, got an array");
    assertThatThrownBy(() -> ReadinessReport.of(JsonText.parse("{\"lock\":\"x\",\"state\":\"HOLDING\"}")))
        .hasMessageStartingWith("not an agent's /status document with an inventory: no \"inventory\" object")
        .hasMessageContaining("fields found: [lock, state]");
    assertThatThrownBy(() -> JsonText.parse("{\"lock\":")).hasMessage("not JSON: expected a value at character 8 "
        + "(end of input)");
    assertThatThrownBy(() -> JsonText.parse("<html>")).hasMessage("not JSON: expected a value at character 0 near "
        + "'<html>'");
  }

  @Test
  void listsWhatTheAgentRefusedLaterAndTheCallerRulesThatMatched() {
    String status = "{\"inventory\":{\"mode\":\"enforce\",\"maxDestinations\":40,\"overflowTotal\":0,"
        + "\"destinations\":[{\"lock\":\"ledger\",\"channel\":\"jdbc\",\"destination\":\"" + URL + "\","
        + "\"table\":\"notes\",\"status\":\"unfenced\",\"tagged\":1,\"blockedCommits\":2,"
        + "\"exemptByCaller\":{\"org.flywaydb.\":3}},{\"lock\":\"ledger\",\"channel\":\"kafka\","
        + "\"destination\":\"events\",\"status\":\"unfenced\",\"tagged\":4,\"failedBatches\":1,"
        + "\"failedRecords\":4,\"exemptByCaller\":{}}]}}";
    ReadinessReport report = ReadinessReport.of(JsonText.parse(status));
    String text = report.text();
    assertThat(text).contains("Refused after the side effect was sent:\n  - table notes of " + URL + ", lock "
        + "'ledger': 2 commits of transactions that wrote there blocked (rolled back) after the lease's deadline\n"
        + "  - topic events, lock 'ledger': 1 producer batch (4 records) failed in the producer's buffer: tagged "
        + "under a lease that expired before they were sent\n");
    assertThat(text).contains("Exemptions that matched:\n  - exempt by caller rule org.flywaydb. "
        + "(fencing.exempt.callers): 3 writes to table notes of " + URL + " under lock 'ledger' passed untagged");
    assertThat(report.rows().get(0).sideEffects()).isEqualTo(4);
    Map<?, ?> json = (Map<?, ?>) JsonText.parse(report.json());
    Map<?, ?> notes = (Map<?, ?>) ((List<?>) json.get("destinations")).get(0);
    assertThat(notes.get("blockedCommits")).isEqualTo(2L);
    assertThat(notes.get("exemptByCaller")).isEqualTo(Map.of("org.flywaydb.", 3L));
  }
}
