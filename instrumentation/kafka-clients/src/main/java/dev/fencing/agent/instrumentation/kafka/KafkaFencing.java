package dev.fencing.agent.instrumentation.kafka;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.KafkaHook;
import dev.fencing.agent.bootstrap.ReentryGuard;
import dev.fencing.agent.instrumentation.api.InstrumentationConfig;
import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.instrumentation.api.DestinationInventory;
import dev.fencing.agent.instrumentation.api.SideEffectCounters;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Kafka side of the policy: every record sent is a side effect; its topic is fenced when it matches
 * {@code fencing.fenced.kafka}, exempt (never a lock-protected side effect: untagged, never blocked) when it matches
 * {@code fencing.exempt.kafka}. Matching allocates nothing: a hash lookup for exact names, then each glob, split at
 * configuration time into its literal parts (prefix, suffix, middles in order): the per-record test is a
 * {@code startsWith}/{@code endsWith}/{@code indexOf} over them, not a character-by-character backtracking match.
 * Each topic's answer is then remembered (an application sends to a bounded set of topics), so every later record
 * costs one lock-free hash lookup, whether the topic matched a name, a glob, or nothing.
 */
public final class KafkaFencing implements KafkaHook {
  /** Topics answered so far, beyond which answers are computed each time (a runaway set of topic names). */
  static final int MAX_REMEMBERED = 1024;

  /** What a topic is to the policy. */
  enum Route {
    /** Neither fenced nor exempt: blocked after expiry. */
    OPEN,
    /** fencing.fenced.kafka: its consumers check tokens. */
    FENCED,
    /** fencing.exempt.kafka: never a lock-protected side effect (wins over FENCED when both match). */
    EXEMPT
  }

  /** A topic's route and its inventory entry (null beyond the inventory's cap), found together. */
  private record Known(Route route, DestinationInventory.Destination destination) {
  }

  private final ConcurrentHashMap<String, Known> known = new ConcurrentHashMap<>();
  private final DestinationInventory inventory;
  private final Set<String> fencedNames;
  private final Glob[] fencedGlobs;
  private final Set<String> exemptNames;
  private final Glob[] exemptGlobs;
  private final SideEffectCounters sideEffects;
  /** What a record to an exempt topic gets: untagged, never blocked. */
  private final Decision exemptPass;
  private final BufferedBatches buffered;
  private final TransactionGrants transactions = new TransactionGrants(PolicyRecheck.INSTANCE);
  private final java.util.concurrent.atomic.AtomicBoolean fieldsFailureReported =
      new java.util.concurrent.atomic.AtomicBoolean();

  KafkaFencing(List<String> fencedTopics) {
    this(fencedTopics, List.of(), new SideEffectCounters(), "(unset)");
  }

  KafkaFencing(List<String> fencedTopics, List<String> exemptTopics, SideEffectCounters sideEffects, String lock) {
    this(fencedTopics, exemptTopics, sideEffects, new DestinationInventory(), lock);
  }

  KafkaFencing(List<String> fencedTopics, List<String> exemptTopics, SideEffectCounters sideEffects,
      DestinationInventory inventory, String lock) {
    this(fencedTopics, exemptTopics, sideEffects, inventory, lock, new BufferedBatches(PolicyRecheck.INSTANCE));
  }

  /**
   * The policy's recheck of an unfenced Kafka send, for a transaction's commit and a buffered batch; a class of its
   * own rather than lambdas, which premain would spin.
   */
  private static final class PolicyRecheck implements TransactionGrants.Recheck, BufferedBatches.Recheck {
    static final PolicyRecheck INSTANCE = new PolicyRecheck();

    @Override
    public Decision recheck(Decision taggedWith) {
      return Fencing.recheck(Channel.KAFKA, false, taggedWith, 1);
    }

    @Override
    public Decision recheck(Decision taggedWith, int count) {
      return Fencing.recheck(Channel.KAFKA, false, taggedWith, count);
    }
  }

  KafkaFencing(List<String> fencedTopics, BufferedBatches buffered) {
    this(fencedTopics, List.of(), new SideEffectCounters(), new DestinationInventory(), "(unset)", buffered);
  }

  KafkaFencing(List<String> fencedTopics, List<String> exemptTopics, SideEffectCounters sideEffects,
      DestinationInventory inventory, String lock, BufferedBatches buffered) {
    this.inventory = inventory;
    this.buffered = buffered;
    this.sideEffects = sideEffects;
    this.exemptPass = Decision.pass(lock);
    this.fencedNames = names(fencedTopics);
    this.fencedGlobs = globs(fencedTopics);
    this.exemptNames = names(exemptTopics);
    this.exemptGlobs = globs(exemptTopics);
  }

  private static Set<String> names(List<String> topics) {
    Set<String> names = new java.util.HashSet<>();
    for (String t : topics) {
      if (t.indexOf('*') < 0) {
        names.add(t);
      }
    }
    return Set.copyOf(names);
  }

  private static Glob[] globs(List<String> topics) {
    List<Glob> g = new ArrayList<>();
    for (String t : topics) {
      if (t.indexOf('*') >= 0) {
        g.add(new Glob(t));
      }
    }
    return g.toArray(new Glob[0]);
  }

  /** Installs the hook; called once by the kafka-clients instrumentation module. */
  public static void install(AgentContext context) {
    InstrumentationConfig config = context.config();
    Fencing.installKafka(new KafkaFencing(config.fencedKafka(), config.exemptKafka(), context.sideEffects(),
        context.inventory(), config.lock()));
  }

  @Override
  public Decision decide(String topic) {
    return decide(topic, null);
  }

  @Override
  public Decision decide(String topic, Object transactional) {
    Known k = known(topic);
    Route route = k.route;
    if (route == Route.EXEMPT) {
      // fencing.exempt.kafka: untagged, never blocked (nor judged again while buffered), under any lease state.
      if (!ReentryGuard.isAgentThread()) {
        sideEffects.recordExempt(Channel.KAFKA, false);
        inventory.recordExempt(k.destination, exemptPass.lock());
      }
      return exemptPass;
    }
    boolean fenced = route == Route.FENCED;
    Decision d = Fencing.decide(Channel.KAFKA, true, fenced);
    if (!ReentryGuard.isAgentThread()) {
      inventory.record(k.destination, fenced, d);
    }
    if (!fenced) {
      // The grant the record is tagged under, for the batch it joins (appended, on this thread, inside send()).
      Decision tagged = d.isTag() && d.reason() == null ? d : null;
      buffered.sending(tagged);
      if (tagged != null && transactional != null) {
        transactions.sent(transactional, tagged); // its commit makes it visible: judged by this grant then
      }
    }
    return d;
  }

  @Override
  public void transactionBegins(Object transactional) {
    transactions.begins(transactional);
  }

  @Override
  public Decision committing(Object transactional) {
    return transactions.check(transactional);
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
      Known k = known(a.topic(batch));
      if (k.route != Route.OPEN) {
        return null; // fenced: the consumer's fence judges the token the records carry; exempt: never judged
      }
      int records = a.recordCount(batch);
      Decision d = buffered.check(batch, records, fail);
      if (fail && d != null) {
        batchFailed(k, d, records);
      }
      return d;
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
      Known k = known(a.topic(batch));
      if (k.route != Route.OPEN) {
        return null;
      }
      int records = a.recordCount(batch);
      Decision d = buffered.expireHeld(batch, records);
      if (d != null) {
        batchFailed(k, d, records);
      }
      return d;
    } catch (Throwable t) {
      reportFieldsFailure(t);
      return null;
    }
  }

  /** The agent fails a batch toward the topic of {@code k}: counted on its entry, under the decision's lock. */
  private static void batchFailed(Known k, Decision d, int records) {
    if (k.destination != null) {
      k.destination.of(d.lock()).batchFailed(records);
    }
  }

  @Override
  public void appended(Object batch) {
    if (batch != null) {
      buffered.appended(batch);
    }
  }

  @Override
  public void batchDone(Object batch) {
    if (batch != null) {
      buffered.done(batch);
    }
  }

  @Override
  public void batchSplit(Object batch, Iterable<?> parts) {
    if (batch != null && parts != null) {
      buffered.split(batch, parts);
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
          + "(topicPartition, recordCount) of this kafka-clients: records waiting in the producer are "
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
    return route(topic) == Route.FENCED;
  }

  boolean exempt(String topic) {
    return route(topic) == Route.EXEMPT;
  }

  /** The topic's route, remembered per topic: after the first record, one lock-free hash lookup. */
  Route route(String topic) {
    return known(topic).route;
  }

  private static final Known NO_TOPIC = new Known(Route.OPEN, null);

  /** The topic's route and inventory entry, remembered per topic: after the first record, one lock-free lookup. */
  private Known known(String topic) {
    if (topic == null) {
      return NO_TOPIC;
    }
    Known answer = known.get(topic);
    if (answer != null) {
      return answer;
    }
    Route r = exemptNames.contains(topic) || matchesAny(exemptGlobs, topic) ? Route.EXEMPT
        : fencedNames.contains(topic) || matchesAny(fencedGlobs, topic) ? Route.FENCED : Route.OPEN;
    Known k = new Known(r, inventory.kafka(topic));
    if (known.size() < MAX_REMEMBERED) {
      Known raced = known.putIfAbsent(topic, k);
      return raced != null ? raced : k;
    }
    return k;
  }

  /** How many topics have a remembered answer (tests). */
  int remembered() {
    return known.size();
  }

  private static boolean matchesAny(Glob[] globs, String topic) {
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
