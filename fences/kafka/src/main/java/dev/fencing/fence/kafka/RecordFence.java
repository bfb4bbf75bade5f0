package dev.fencing.fence.kafka;

import dev.fencing.fence.store.FenceStoreException;
import dev.fencing.protocol.Rejection;
import dev.fencing.protocol.TokenHeaders;
import dev.fencing.protocol.TokenSignature;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The decision on one poll's records (docs/DESIGN.md section 4), per (lock, topic, partition): a record with a valid token
 * for a guarded lock is judged by {@link PartitionVerdict} against its partition's advances at its offset, read from
 * the store once per partition and batch; a record that raises the partition's fence is stored as a new advance
 * before the records after it are judged. Kafka orders records only within a partition, so that is the only order the
 * fence uses: a record of the old holder is stale only if it was appended to its partition after a record of a newer
 * token was.
 *
 * <p>Nothing is decided without the store: when it fails, the poll waits (backing off up to {@value #MAX_BACKOFF_MS}
 * ms) and asks again until it answers, logging once per outage and counting each failure. Kafka hands the unfiltered
 * batch to the application when an interceptor throws, and the consumer's position is already past the batch, so
 * neither throwing nor dropping would be safe. A failure of the fence itself (a bug) quarantines every fenced record
 * of the batch instead (fail closed).
 */
final class RecordFence {

  private static final Logger LOG = LoggerFactory.getLogger(RecordFence.class);
  static final long MAX_BACKOFF_MS = 5_000;
  private static final long FIRST_BACKOFF_MS = 100;

  private final KafkaFenceSettings settings;
  private final PartitionFenceStore store;
  private final KafkaFenceMetrics metrics;
  private final Set<String> locks;
  private final String fallbackLabel;
  private final TokenSignature signingKey;
  private final long firstBackoffMillis;

  /** One partition of one lock in the batch: the offsets it spans and, once read, its advances. */
  private static final class Run {
    long from = Long.MAX_VALUE;
    long to = -1;
    NavigableMap<Long, PartitionFenceStore.Advance> advances;
  }

  private record RunKey(String lock, String topic, int partition) {
  }

  /** The records to hand to the application and those refused. */
  record Outcome<K, V>(ConsumerRecords<K, V> accepted, List<Quarantine> quarantined) {
  }

  RecordFence(KafkaFenceSettings settings, PartitionFenceStore store, KafkaFenceMetrics metrics) {
    this(settings, store, metrics, FIRST_BACKOFF_MS);
  }

  RecordFence(KafkaFenceSettings settings, PartitionFenceStore store, KafkaFenceMetrics metrics,
      long firstBackoffMillis) {
    this.settings = settings;
    this.store = store;
    this.metrics = metrics;
    this.locks = settings.locks();
    this.signingKey = settings.policy().signingKey();
    this.fallbackLabel = KafkaFenceMetrics.fallbackLabel(locks);
    this.firstBackoffMillis = firstBackoffMillis;
    for (String lock : locks) {
      metrics.register(lock);
    }
    metrics.register(fallbackLabel);
  }

  /** The label the metrics use when a record named no guarded lock. */
  String fallbackLabel() {
    return fallbackLabel;
  }

  <K, V> Outcome<K, V> filter(ConsumerRecords<K, V> records) {
    if (records.isEmpty()) {
      return new Outcome<>(records, List.of());
    }
    List<ConsumerRecord<K, V>> all = new ArrayList<>(records.count());
    for (ConsumerRecord<K, V> r : records) {
      all.add(r);
    }
    try {
      return decide(records, all);
    } catch (RuntimeException e) {
      return failClosed(records, all, e);
    }
  }

  private <K, V> Outcome<K, V> decide(ConsumerRecords<K, V> records, List<ConsumerRecord<K, V>> all) {
    int n = all.size();
    Rejection[] reason = new Rejection[n];
    String[] detail = new String[n];
    String[] lockOf = new String[n];
    long[] token = new long[n];
    long[] current = new long[n];
    TokenHeaders.Result[] headers = new TokenHeaders.Result[n];
    String[] eventId = new String[n];
    boolean[] duplicate = new boolean[n];
    Map<RunKey, Run> runs = new HashMap<>();
    boolean strict = settings.strict();
    boolean refused = false;

    for (int i = 0; i < n; i++) {
      ConsumerRecord<K, V> r = all.get(i);
      if (!settings.fences(r.topic())) {
        continue;
      }
      TokenHeaders.Result h = FencingHeaders.read(r.headers(), locks, signingKey);
      lockOf[i] = h.lock();
      token[i] = h.token();
      if (!h.isValid()) {
        if (h.rejection() != Rejection.MISSING_TOKEN || !settings.policy().permissive()) {
          reason[i] = h.rejection();
          detail[i] = h.detail();
          refused = true;
        }
        continue;
      }
      if (settings.dedupesEvents(r.topic())) {
        FencingHeaders.EventId e = FencingHeaders.eventId(r.headers());
        if (e.problem() != null) {
          reason[i] = Rejection.MALFORMED_TOKEN;
          detail[i] = e.problem();
          refused = true;
          continue;
        }
        eventId[i] = e.id();
      }
      headers[i] = h;
      Run run = runs.computeIfAbsent(new RunKey(h.lock(), r.topic(), r.partition()), k -> new Run());
      run.from = Math.min(run.from, r.offset());
      run.to = Math.max(run.to, r.offset());
    }

    for (Map.Entry<RunKey, Run> e : runs.entrySet()) {
      RunKey k = e.getKey();
      Run run = e.getValue();
      List<PartitionFenceStore.Advance> list = untilAnswered(k.lock(),
          () -> store.advances(k.lock(), k.topic(), k.partition(), run.from, run.to));
      run.advances = new TreeMap<>();
      for (PartitionFenceStore.Advance a : list) {
        run.advances.put(a.offset(), a);
      }
    }

    for (int i = 0; i < n; i++) {
      TokenHeaders.Result h = headers[i];
      if (h == null) {
        continue;
      }
      ConsumerRecord<K, V> r = all.get(i);
      RunKey k = new RunKey(h.lock(), r.topic(), r.partition());
      Run run = runs.get(k);
      PartitionVerdict.Result v = PartitionVerdict.judge(run.advances, r.offset(), h.token(), h.grant(), strict);
      if (eventId[i] != null) {
        duplicate[i] = outboxEvent(k, run, r, h, eventId[i], v);
        refused |= duplicate[i];
        continue;
      }
      if (v.kind() == PartitionVerdict.Kind.ADVANCE) {
        PartitionFenceStore.Advance mine = new PartitionFenceStore.Advance(r.offset(), h.token(), h.grant());
        PartitionFenceStore.Advance stored = untilAnswered(k.lock(),
            () -> store.record(k.lock(), k.topic(), k.partition(), mine));
        run.advances.put(stored.offset(), stored);
        // Normally the stored advance is this record's (or the same record's, stored by another consumer first).
        v = PartitionVerdict.judge(run.advances, r.offset(), h.token(), h.grant(), strict);
        if (v.kind() == PartitionVerdict.Kind.ADVANCE) {
          v = new PartitionVerdict.Result(PartitionVerdict.Kind.STALE, stored.token()); // never loop on a bad store
        }
      }
      if (v.kind() == PartitionVerdict.Kind.STALE) {
        reason[i] = Rejection.STALE_TOKEN;
        current[i] = v.current();
        detail[i] = staleDetail(h.lock(), h.token(), v.current(), r);
        refused = true;
      } else if (v.kind() == PartitionVerdict.Kind.REPLAYED) {
        reason[i] = Rejection.REPLAYED_TOKEN;
        current[i] = v.current();
        detail[i] = replayedDetail(h.lock(), h.token(), h.grant());
        refused = true;
      }
    }
    if (!refused) {
      return new Outcome<>(records, List.of());
    }

    Map<TopicPartition, List<ConsumerRecord<K, V>>> kept = new LinkedHashMap<>();
    List<Quarantine> quarantined = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ConsumerRecord<K, V> r = all.get(i);
      if (duplicate[i]) {
        continue;
      }
      if (reason[i] == null) {
        kept.computeIfAbsent(new TopicPartition(r.topic(), r.partition()), tp -> new ArrayList<>()).add(r);
      } else {
        String label = lockOf[i] != null ? lockOf[i] : fallbackLabel;
        metrics.reject(label, reason[i]);
        quarantined.add(new Quarantine(r, label, reason[i], detail[i], token[i], current[i]));
      }
    }
    return new Outcome<>(Batches.of(kept, records), quarantined);
  }

  /**
   * The outbox rule ({@code fencing.fence.outbox=dedupe}) for a record with valid headers and an event id: its event
   * passed the SQL fence when it committed, and the relay delivers a key's events in commit order, possibly after a
   * successor's records, so the partition's fence does not judge it; a higher token still raises the fence (a direct
   * record of an older holder after it is stale). What is left to refuse is a later copy of the same event (the relay
   * delivers at least once): the first copy's position is stored, and only that record is handed over, every time it
   * is read. Returns whether the record is a later copy.
   */
  private boolean outboxEvent(RunKey k, Run run, ConsumerRecord<?, ?> r, TokenHeaders.Result h, String eventId,
      PartitionVerdict.Result v) {
    PartitionFenceStore.Position here = new PartitionFenceStore.Position(r.topic(), r.partition(), r.offset());
    PartitionFenceStore.Position first = untilAnswered(k.lock(), () -> store.firstCopy(k.lock(), eventId, here));
    if (!first.equals(here)) {
      LOG.info("fencing: outbox event '{}' of lock '{}' at {}-{}@{} skipped: a later copy of the one at {}-{}@{}",
          eventId, k.lock(), r.topic(), r.partition(), r.offset(), first.topic(), first.partition(), first.offset());
      metrics.duplicate(k.lock());
      return true;
    }
    if (v.kind() == PartitionVerdict.Kind.ADVANCE) {
      PartitionFenceStore.Advance mine = new PartitionFenceStore.Advance(r.offset(), h.token(), h.grant());
      PartitionFenceStore.Advance stored = untilAnswered(k.lock(),
          () -> store.record(k.lock(), k.topic(), k.partition(), mine));
      run.advances.put(stored.offset(), stored);
    }
    return false;
  }

  /**
   * Runs a store call until it answers: the poll waits while the store is down (see the class comment). An interrupt
   * does not end the wait (the records cannot be handed over undecided); the thread's interrupt status is restored
   * when the call returns.
   */
  private <T> T untilAnswered(String lock, Supplier<T> call) {
    long backoff = firstBackoffMillis;
    long failingSince = 0;
    int failures = 0;
    boolean interrupted = false;
    try {
      while (true) {
        try {
          T answer = call.get();
          if (failures > 0) {
            LOG.warn("fencing: the fence store answers again after {} ms and {} failed attempt(s); the poll goes on",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - failingSince), failures);
          }
          return answer;
        } catch (FenceStoreException e) {
          metrics.storeFailure();
          if (failures++ == 0) {
            failingSince = System.nanoTime();
            LOG.warn("fencing: the fence store failed ({}); the poll waits and retries until it answers: no record "
                + "of lock '{}' is handed over or dropped undecided", e.getMessage(), lock);
          } else {
            LOG.debug("fencing: the fence store failed again (attempt {}): {}", failures, e.getMessage());
          }
        }
        try {
          Thread.sleep(backoff);
        } catch (InterruptedException ie) {
          interrupted = true;
        }
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** The fence itself failed: every fenced record is quarantined, the others pass. */
  private <K, V> Outcome<K, V> failClosed(ConsumerRecords<K, V> records, List<ConsumerRecord<K, V>> all,
      RuntimeException e) {
    LOG.error("fencing: the fence failed to decide; the batch's fenced records are quarantined", e);
    Map<TopicPartition, List<ConsumerRecord<K, V>>> kept = new LinkedHashMap<>();
    List<Quarantine> quarantined = new ArrayList<>();
    String detail = "the fence failed to decide (" + e + "); quarantined rather than let through";
    for (ConsumerRecord<K, V> r : all) {
      if (settings.fences(r.topic())) {
        metrics.reject(fallbackLabel, Rejection.STORE_UNAVAILABLE);
        quarantined.add(new Quarantine(r, fallbackLabel, Rejection.STORE_UNAVAILABLE, detail, 0, 0));
      } else {
        kept.computeIfAbsent(new TopicPartition(r.topic(), r.partition()), tp -> new ArrayList<>()).add(r);
      }
    }
    return new Outcome<>(Batches.of(kept, records), quarantined);
  }

  private static String staleDetail(String lock, long token, long current, ConsumerRecord<?, ?> r) {
    return token < current
        ? "token " + token + " for lock '" + lock + "' is lower than the fence token " + current + " of " + r.topic()
            + "-" + r.partition() + " at offset " + r.offset()
            + ": a newer lock holder wrote to this partition before this record, which comes from a stale one"
        : "token " + token + " for lock '" + lock + "' is not above the fence token " + current
            + " (strict mode: every record needs a new token)";
  }

  private static String replayedDetail(String lock, long token, String grant) {
    return "token " + token + " for lock '" + lock + "' was issued to another grant than this record's ("
        + (grant == null ? "none" : "'" + grant + "'") + "): the fence holds it for the grant that advanced it; a "
        + "coordinator restored from a snapshot gave the same token to a second holder";
  }
}
