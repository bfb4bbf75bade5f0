package dev.fencing.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code outbox relay} refuses bad arguments with exit code 2 and a message naming the option and what it expects. */
class OutboxCliTest {

  private record Run(int code, String out) {}

  private static Run run(String... args) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int code = OutboxCli.run(args, new PrintStream(bytes, true, StandardCharsets.UTF_8));
    return new Run(code, bytes.toString(StandardCharsets.UTF_8));
  }

  private static final String BASE = "relay --jdbc-url jdbc:postgresql://127.0.0.1:1/x --table outbox ";

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "relay --table outbox|missing --jdbc-url",
      "relay --jdbc-url jdbc:h2:mem:x|missing --table",
      "deliver|unknown outbox command 'deliver': expected relay",
      BASE + "--bogus 1|unknown argument '--bogus'",
      BASE + "--poll-interval 10|--poll-interval: a positive duration such as 500ms, 10s or 5m expected, got '10'",
      BASE + "--backoff 0s|--backoff: a positive duration such as 500ms, 10s or 5m expected, got '0s'",
      BASE + "--max-attempts zero|--max-attempts: a whole number of 1 or more expected, got 'zero'",
      BASE + "--concurrency 0|--concurrency: a whole number of 1 or more expected, got '0'",
      BASE + "--metrics-port 70000|--metrics-port: a port from 0 to 65535 expected, got '70000'",
      BASE + "--kafka-bootstrap kafka|--kafka-bootstrap: HOST:PORT[,HOST:PORT...] expected, got 'kafka'",
      BASE + "--kafka-jar /nonexistent.jar|--kafka-jar needs --kafka-bootstrap",
      BASE + "--kafka-bootstrap k:9092 --kafka-jar /nonexistent.jar|--kafka-jar: jars or folders of jars expected, "
          + "nothing at /nonexistent.jar",
      BASE + "--kafka-bootstrap k:9092 --kafka-property acks|--kafka-property: KEY=VALUE expected, got 'acks'",
      BASE + "--driver-jar /nonexistent.jar|--driver-jar: a JDBC driver jar expected, no file at /nonexistent.jar",
      BASE + "--password-file /x|--password-file needs --user",
      BASE + "--claim-timeout 5s --request-timeout 5s|request timeout 5000 ms must be below the claim timeout 5000 ms",
      BASE + "--table a.b.c|--table given twice",
      "relay --jdbc-url jdbc:h2:mem:x --table 'a b'|--table: [schema.]name of letters, digits and _ expected",
      BASE + "--no-listen=yes|--no-listen takes no value",
      BASE + "--batch-size|--batch-size needs a value",
      BASE + "--stats-interval 1x|--stats-interval: a positive duration such as 500ms, 10s or 5m expected, got '1x'",
  })
  void badArgumentsExitTwoNamingTheOption(String args, String message) {
    Run r = run(args.replace("'a b'", "a-b").split(" "));
    assertThat(r.code()).as(r.out()).isEqualTo(2);
    assertThat(r.out()).contains("outbox: " + message.replace("'a b'", "'a-b'"));
    assertThat(r.out()).contains("usage:");
  }

  @Test
  void helpPrintsTheUsage() {
    Run r = run("--help");
    assertThat(r.code()).isZero();
    assertThat(r.out()).contains("outbox relay --jdbc-url URL").contains("--metrics-port");
    assertThat(run().code()).isEqualTo(2);
  }

  @Test
  void anUnreachableDatabaseAtStartExitsOne() {
    Run r = run("relay", "--jdbc-url", "jdbc:nosuchdb:x", "--table", "outbox");
    assertThat(r.code()).as(r.out()).isEqualTo(1);
    assertThat(r.out()).contains("outbox relay failed: no JDBC driver for jdbc:nosuchdb:x on the class path: "
        + "pass --driver-jar <driver.jar>");
  }
}
