package dev.fencing.agent.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ConfigLoader;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** The fencing.outbox.* settings: bad ones are the relay's problems, each naming the key and the form, never the agent's. */
class RelaySettingsTest {
  private static AgentConfig config(String args) {
    return ConfigLoader.load("lock=ledger," + args, new Properties(), Map.of());
  }

  @Test
  void validSettingsGiveTheRelaysTablesAndOptions() {
    RelaySettings s = new RelaySettings(config("outbox.enabled=true,outbox.table=outbox,"
        + "outbox.jdbc-url=jdbc:postgresql://db/shop,outbox.user=relay,outbox.poll-interval=500ms,"
        + "outbox.max-attempts=3,outbox.kafka-bootstrap=k1:9092"));
    assertThat(s.problems).isEmpty();
    assertThat(s.enabled).isTrue();
    assertThat(s.jdbcUrl).isEqualTo("jdbc:postgresql://db/shop");
    assertThat(s.credentials.getProperty("user")).isEqualTo("relay");
    assertThat(s.pollInterval).isEqualTo(Duration.ofMillis(500));
    assertThat(s.maxAttempts).isEqualTo(3);
    assertThat(s.kafkaBootstrap).isEqualTo("k1:9092");
  }

  @Test
  void byDefaultNoRelayRunsAndNothingIsChecked() {
    RelaySettings s = new RelaySettings(config("outbox.max-attempts=many"));
    assertThat(s.enabled).isFalse();
    assertThat(s.problems).isEmpty();
  }

  @Test
  void badOutboxSettingsAreTheRelaysProblemsNeverTheAgents() {
    AgentConfig config = config("outbox.enabled=true,outbox.table=out box,outbox.max-attempts=0,"
        + "outbox.poll-interval=soon,outbox.password-file=/nonexistent/relay-password");
    assertThat(config.valid()).as("the agent: " + config.problems()).isTrue();
    RelaySettings s = new RelaySettings(config);
    assertThat(s.problems).containsExactly(
        "fencing.outbox.table='out box' (agent argument outbox.table): expected comma-separated [schema.]table names (letters, "
            + "digits, _), got 'out box'",
        "fencing.outbox.jdbc-url=(not set) (default): expected the outbox's JDBC URL (jdbc:...)",
        "fencing.outbox.password-file='/nonexistent/relay-password' (agent argument outbox.password-file): needs fencing.outbox.user",
        "fencing.outbox.password-file='/nonexistent/relay-password' (agent argument outbox.password-file): expected a readable file "
            + "whose first line is the password",
        "fencing.outbox.poll-interval='soon' (agent argument outbox.poll-interval): expected a positive duration such as 500ms, 10s or 5m",
        "fencing.outbox.max-attempts='0' (agent argument outbox.max-attempts): expected a whole number of 1 or more");
  }

  @Test
  void anEnabledFlagThatIsNeitherTrueNorFalseIsAProblemAndNoRelay() {
    RelaySettings s = new RelaySettings(config("outbox.enabled=yes"));
    assertThat(s.enabled).isFalse();
    assertThat(s.problems).containsExactly("fencing.outbox.enabled='yes' (agent argument outbox.enabled): expected true or false");
  }
}
