package dev.fencing.fence.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.serialization.LongSerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

class KafkaFenceSettingsTest {

  private static Map<String, Object> config(Object... pairs) {
    Map<String, Object> m = new HashMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      m.put((String) pairs[i], pairs[i + 1]);
    }
    return m;
  }

  @Test
  void defaults() {
    KafkaFenceSettings s = KafkaFenceSettings.from(config(KafkaFenceSettings.LOCKS, " ledger , payments ",
        KafkaFenceSettings.JDBC_URL, "jdbc:h2:mem:x"));
    assertThat(s.locks()).containsExactly("ledger", "payments");
    assertThat(s.strict()).isFalse();
    assertThat(s.missing()).isEqualTo(KafkaFenceSettings.Missing.QUARANTINE);
    assertThat(s.store()).isEqualTo(KafkaFenceSettings.Store.JDBC);
    assertThat(s.fences("any")).isTrue();
    assertThat(s.deadLetterTopic()).isNull();
    assertThat(s.deadLetterTimeoutMillis()).isEqualTo(5000);
    assertThat(s.micrometer()).isTrue();
  }

  @Test
  void listsMayBeGivenAsListsToo() {
    KafkaFenceSettings s = KafkaFenceSettings.from(config(KafkaFenceSettings.LOCKS, List.of("a", "b"),
        KafkaFenceSettings.TOPICS, "orders", KafkaFenceSettings.STORE, "MEMORY"));
    assertThat(s.locks()).containsExactly("a", "b");
    assertThat(s.fences("orders")).isTrue();
    assertThat(s.fences("audit")).isFalse();
  }

  @Test
  void theDeadLetterTopicIsNeverFenced() {
    KafkaFenceSettings s = KafkaFenceSettings.from(config(KafkaFenceSettings.LOCKS, "l", KafkaFenceSettings.STORE,
        "memory", KafkaFenceSettings.DLQ_TOPIC, "orders.fenced"));
    assertThat(s.fences("orders")).isTrue();
    assertThat(s.fences("orders.fenced")).isFalse();
  }

  @Test
  void invalidValuesNameTheKeyTheValueAndTheExpectedForm() {
    assertThatThrownBy(() -> KafkaFenceSettings.from(config()))
        .isInstanceOf(ConfigException.class).hasMessageContaining(KafkaFenceSettings.LOCKS);
    assertThatThrownBy(() -> KafkaFenceSettings.from(config(KafkaFenceSettings.LOCKS, "bad lock")))
        .isInstanceOf(ConfigException.class).hasMessageContaining(KafkaFenceSettings.LOCKS)
        .hasMessageContaining("bad lock");
    assertThatThrownBy(() -> KafkaFenceSettings.from(config(KafkaFenceSettings.LOCKS, "l")))
        .isInstanceOf(ConfigException.class).hasMessageContaining(KafkaFenceSettings.JDBC_URL)
        .hasMessageContaining("store=memory");
    assertThatThrownBy(() -> KafkaFenceSettings.from(config(KafkaFenceSettings.LOCKS, "l",
        KafkaFenceSettings.STORE, "memory", KafkaFenceSettings.MISSING, "drop")))
        .isInstanceOf(ConfigException.class).hasMessageContaining(KafkaFenceSettings.MISSING)
        .hasMessageContaining("quarantine, pass");
    assertThatThrownBy(() -> KafkaFenceSettings.from(config(KafkaFenceSettings.LOCKS, "l",
        KafkaFenceSettings.STORE, "memory", KafkaFenceSettings.STRICT, "yes")))
        .isInstanceOf(ConfigException.class).hasMessageContaining(KafkaFenceSettings.STRICT);
    assertThatThrownBy(() -> KafkaFenceSettings.from(config(KafkaFenceSettings.LOCKS, "l",
        KafkaFenceSettings.STORE, "memory", KafkaFenceSettings.DLQ_TIMEOUT, "0")))
        .isInstanceOf(ConfigException.class).hasMessageContaining(KafkaFenceSettings.DLQ_TIMEOUT);
    assertThatThrownBy(() -> KafkaFenceSettings.from(config(KafkaFenceSettings.LOCKS, "l",
        KafkaFenceSettings.JDBC_DATASOURCE, "jdbc:h2:mem:x")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("javax.sql.DataSource");
  }

  @Test
  void deadLetterProducerGetsTheConsumersConnectionAndItsOwnOverrides() {
    Map<String, Object> consumer = config(KafkaFenceSettings.LOCKS, "l", KafkaFenceSettings.STORE, "memory",
        KafkaFenceSettings.DLQ_TOPIC, "dead", "bootstrap.servers", "b:9092", "security.protocol", "SSL",
        "ssl.truststore.location", "/t", "group.id", "g", "client.id", "c",
        KafkaFenceSettings.DLQ_PRODUCER_PREFIX + "compression.type", "zstd");
    Map<String, Object> p = DeadLetters.producerConfig(KafkaFenceSettings.from(consumer), consumer);
    assertThat(p).containsEntry("bootstrap.servers", "b:9092").containsEntry("security.protocol", "SSL")
        .containsEntry("ssl.truststore.location", "/t").containsEntry("compression.type", "zstd")
        .containsEntry("client.id", "c-fencing-dead-letter").containsEntry("max.block.ms", 5000L)
        .doesNotContainKey("group.id");
  }

  @Test
  void deadLetterSerializersAreDerivedFromKafkasOwnDeserializers() {
    assertThat(DeadLetters.serializer(null, "k", StringDeserializer.class, "key.deserializer"))
        .isInstanceOf(StringSerializer.class);
    assertThat(DeadLetters.serializer(null, "k", "org.apache.kafka.common.serialization.LongDeserializer",
        "key.deserializer")).isInstanceOf(LongSerializer.class);
    assertThat(DeadLetters.serializer(LongSerializer.class.getName(), "k", "com.example.Custom", "d"))
        .isInstanceOf(LongSerializer.class);
    assertThatThrownBy(() -> DeadLetters.serializer(null, KafkaFenceSettings.DLQ_VALUE_SERIALIZER,
        "com.example.AvroDeserializer", "value.deserializer"))
        .isInstanceOf(ConfigException.class).hasMessageContaining(KafkaFenceSettings.DLQ_VALUE_SERIALIZER)
        .hasMessageContaining("com.example.AvroDeserializer");
  }

  /** README.md's settings table is generated from KafkaFenceSettings.KEYS: regenerate it when a key changes. */
  @Test
  void readmeListsEverySettingWithItsDefault() throws Exception {
    String readme = Files.readString(Path.of("README.md"));
    assertThat(readme).as("README.md table; regenerate from KafkaFenceSettings.markdownTable():\n"
        + KafkaFenceSettings.markdownTable()).contains(KafkaFenceSettings.markdownTable());
  }
}
