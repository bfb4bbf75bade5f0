package dev.fencing.agent.instrumentation.kafka;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.KafkaHook;
import dev.fencing.agent.config.AgentConfig;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The Kafka side of the policy: every record sent is a side effect; its topic is fenced when it matches
 * {@code fencing.fenced.kafka}. Matching allocates nothing: a hash lookup for exact names, then each glob.
 */
public final class KafkaFencing implements KafkaHook {
  private final Set<String> exact = new HashSet<>();
  private final String[] globs;

  KafkaFencing(List<String> fencedTopics) {
    List<String> g = new ArrayList<>();
    for (String t : fencedTopics) {
      if (t.indexOf('*') >= 0) {
        g.add(t);
      } else {
        exact.add(t);
      }
    }
    globs = g.toArray(new String[0]);
  }

  /** Installs the hook; called once by the kafka-clients instrumentation module. */
  public static void install(AgentConfig config) {
    Fencing.installKafka(new KafkaFencing(config.fencedKafka()));
  }

  @Override
  public Decision decide(String topic) {
    return Fencing.decide(Channel.KAFKA, true, fenced(topic));
  }

  @Override
  public java.util.Iterator<?> consumed(java.util.Iterator<?> records) {
    return records == null ? null : new RecordTokenIterator<>(records);
  }

  @Override
  public void polled() {
    RecordTokenIterator.endCurrent();
  }

  boolean fenced(String topic) {
    if (topic == null) {
      return false;
    }
    if (exact.contains(topic)) {
      return true;
    }
    for (String g : globs) {
      if (globMatches(g, topic)) {
        return true;
      }
    }
    return false;
  }

  /** {@code *} matches any run of characters (also none); every other character matches itself (case-sensitive, as topic names are). */
  static boolean globMatches(String glob, String text) {
    int g = 0;
    int t = 0;
    int star = -1;
    int resume = 0;
    while (t < text.length()) {
      if (g < glob.length() && glob.charAt(g) == '*') {
        star = g++;
        resume = t;
      } else if (g < glob.length() && glob.charAt(g) == text.charAt(t)) {
        g++;
        t++;
      } else if (star >= 0) {
        g = star + 1;
        t = ++resume;
      } else {
        return false;
      }
    }
    while (g < glob.length() && glob.charAt(g) == '*') {
      g++;
    }
    return g == glob.length();
  }
}
