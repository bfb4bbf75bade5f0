package dev.fencing.agent.instrumentation.kafka;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.KafkaHook;
import dev.fencing.agent.config.AgentConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Kafka side of the policy: every record sent is a side effect; its topic is fenced when it matches
 * {@code fencing.fenced.kafka}. Matching allocates nothing: a hash lookup for exact names, then each glob, split at
 * configuration time into its literal parts (prefix, suffix, middles in order): the per-record test is a
 * {@code startsWith}/{@code endsWith}/{@code indexOf} over them, not a character-by-character backtracking match.
 * Each topic's answer is then remembered (an application sends to a bounded set of topics), so every later record
 * costs one lock-free hash lookup, whether the topic matched a name, a glob, or nothing.
 */
public final class KafkaFencing implements KafkaHook {
  /** Topics answered so far, beyond which answers are computed each time (a runaway set of topic names). */
  static final int MAX_REMEMBERED = 1024;

  private final ConcurrentHashMap<String, Boolean> known = new ConcurrentHashMap<>();
  private final Glob[] globs;
  private final BufferedBatches buffered;
  private final java.util.concurrent.atomic.AtomicBoolean fieldsFailureReported =
      new java.util.concurrent.atomic.AtomicBoolean();

  KafkaFencing(List<String> fencedTopics) {
    this(fencedTopics, new BufferedBatches(
        (taggedWith, count) -> Fencing.recheck(Channel.KAFKA, false, taggedWith, count), System::currentTimeMillis));
  }

  KafkaFencing(List<String> fencedTopics, BufferedBatches buffered) {
    this.buffered = buffered;
    List<Glob> g = new ArrayList<>();
    for (String t : fencedTopics) {
      if (t.indexOf('*') >= 0) {
        g.add(new Glob(t));
      } else {
        known.put(t, Boolean.TRUE);
      }
    }
    globs = g.toArray(new Glob[0]);
  }

  /** Installs the hook; called once by the kafka-clients instrumentation module. */
  public static void install(AgentConfig config) {
    Fencing.installKafka(new KafkaFencing(config.fencedKafka()));
  }

  @Override
  public Decision decide(String topic) {
    boolean fenced = fenced(topic);
    Decision d = Fencing.decide(Channel.KAFKA, true, fenced);
    if (!fenced && d.isTag() && d.reason() == null) {
      buffered.tagged(d); // which grant buffered records toward unfenced topics were tagged under
    }
    return d;
  }

  @Override
  public Decision buffered(Object batch, boolean fail) {
    if (batch == null) {
      return null;
    }
    ProducerBatchFields.Accessors a = accessors(batch);
    if (a == null) {
      return null;
    }
    try {
      if (fenced(a.topic(batch))) {
        return null; // the consumer's fence judges the token the records carry
      }
      return buffered.check(a.createdMs(batch), a.recordCount(batch), fail);
    } catch (Throwable t) {
      reportFieldsFailure(t);
      return null;
    }
  }

  @Override
  public boolean bufferedMayBeHeld() {
    return buffered.mayBeHeld();
  }

  @Override
  public void expirySweep(boolean started) {
    buffered.sweep(started);
  }

  @Override
  public Decision expireHeld(Object batch) {
    ProducerBatchFields.Accessors a = batch == null ? null : accessors(batch);
    if (a == null) {
      return null;
    }
    try {
      if (fenced(a.topic(batch))) {
        return null;
      }
      return buffered.expireHeld(batch, a.createdMs(batch), a.recordCount(batch));
    } catch (Throwable t) {
      reportFieldsFailure(t);
      return null;
    }
  }

  @Override
  public Decision expiredHeld(Object batch) {
    return batch == null ? null : buffered.expiredHeld(batch);
  }

  private ProducerBatchFields.Accessors accessors(Object batch) {
    ProducerBatchFields.Lookup l = ProducerBatchFields.of(batch.getClass());
    if (l.accessors == null) {
      reportFieldsFailure(l.failure);
    }
    return l.accessors;
  }

  /**
   * Once: a kafka-clients whose batches the agent cannot read. Reported as a hook failure (never blocking: the
   * decision at send() stands), so that buffered records are then judged at send() only.
   */
  private void reportFieldsFailure(Throwable t) {
    if (fieldsFailureReported.compareAndSet(false, true)) {
      Fencing.hookFailed(Channel.KAFKA, false, new IllegalStateException("cannot read ProducerBatch fields "
          + "(topicPartition, createdMs, recordCount) of this kafka-clients: records waiting in the producer are "
          + "judged at send() only", t));
    }
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
    Boolean answer = known.get(topic);
    if (answer != null) {
      return answer;
    }
    boolean fenced = matchesAnyGlob(topic);
    if (known.size() < MAX_REMEMBERED) {
      known.putIfAbsent(topic, fenced);
    }
    return fenced;
  }

  /** How many topics have a remembered answer (tests). */
  int remembered() {
    return known.size();
  }

  private boolean matchesAnyGlob(String topic) {
    for (Glob g : globs) {
      if (g.matches(topic)) {
        return true;
      }
    }
    return false;
  }

  /** A glob with at least one {@code *}, split at its stars; matches exactly what {@link #globMatches} does. */
  static final class Glob {
    private final String prefix;
    private final String suffix;
    /** Non-empty literal parts between the first and the last star, in order. */
    private final String[] middles;
    private final int minLength;

    Glob(String glob) {
      int first = glob.indexOf('*');
      int last = glob.lastIndexOf('*');
      prefix = glob.substring(0, first);
      suffix = glob.substring(last + 1);
      List<String> m = new ArrayList<>();
      for (String part : glob.substring(first + 1, Math.max(first + 1, last)).split("\\*")) {
        if (!part.isEmpty()) {
          m.add(part);
        }
      }
      middles = m.toArray(new String[0]);
      int min = prefix.length() + suffix.length();
      for (String part : middles) {
        min += part.length();
      }
      minLength = min;
    }

    boolean matches(String text) {
      if (text.length() < minLength || !text.startsWith(prefix) || !text.endsWith(suffix)) {
        return false;
      }
      // Leftmost occurrence of each middle part in order: if any placement fits between prefix and suffix, the
      // leftmost does (a star absorbs whatever lies between).
      int from = prefix.length();
      int limit = text.length() - suffix.length();
      for (String part : middles) {
        int at = text.indexOf(part, from);
        if (at < 0 || at + part.length() > limit) {
          return false;
        }
        from = at + part.length();
      }
      return true;
    }
  }

  /**
   * The reference definition, kept for tests: {@code *} matches any run of characters (also none); every other
   * character matches itself (case-sensitive, as topic names are).
   */
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
