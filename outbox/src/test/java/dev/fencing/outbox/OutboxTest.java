package dev.fencing.outbox;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import org.junit.jupiter.api.Test;

/** Outbox's one-line calls refuse what the relay could never deliver before they touch the connection. */
class OutboxTest {

  @Test
  void badArgumentsAreRefusedNamingWhatIsExpected() {
    assertThatThrownBy(() -> Outbox.post(null, "outbox", URI.create("ftp://host/x"), "b"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("url: an absolute http(s) URL expected, got ftp://host/x");
    assertThatThrownBy(() -> Outbox.post(null, "outbox", URI.create("/relative"), "b"))
        .hasMessage("url: an absolute http(s) URL expected, got /relative");
    assertThatThrownBy(() -> Outbox.http(null, "outbox", "PO ST", URI.create("http://h/"), null, "b"))
        .hasMessage("method: an HTTP method such as POST or PUT expected, got PO ST");
    assertThatThrownBy(() -> Outbox.http(null, "outbox", "PUT", URI.create("http://h/"), "no colon", "b"))
        .hasMessage("header line 'no colon' is not 'Name: value'");
    assertThatThrownBy(() -> Outbox.kafka(null, "outbox", "bad topic", "k", "v"))
        .hasMessage("topic: a Kafka topic name (letters, digits, '.', '_', '-') expected, got bad topic");
    assertThatThrownBy(() -> Outbox.kafka(null, "out box", "t", "k", "v"))
        .hasMessage("table: [schema.]name of letters, digits and _ expected, got 'out box'");
  }
}
