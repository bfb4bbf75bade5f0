package dev.fencing.fence.kafka;

import dev.fencing.fence.http.FenceState;
import dev.fencing.fence.http.FenceStore;
import dev.fencing.fence.http.Rejection;
import dev.fencing.fence.http.TokenHeaders;
import dev.fencing.fence.http.Verdict;
import dev.fencing.fence.sql.TokenSignature;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;

/**
 * The decision on one poll's records (DESIGN.md section 4): a record with a valid token for a guarded lock is accepted
 * iff its token is at least the highest seen for that lock (strict: above it); lower is stale. An equal token is
 * accepted only from the grant stored with it ({@code fencing-grant}), or when none is stored; from another grant, or
 * without one while one is stored, it is replayed. Records are judged in
 * the order the application would see them, so within the batch a higher token also raises the bar for the records
 * after it.
 *
 * <p>The store is asked at most twice per lock and batch, not per record: one read of the highest token before the
 * walk, and, only when the batch holds a higher one, one check-and-advance to the batch's highest accepted token. If
 * that check finds the fence overtaken meanwhile (another consumer of the lock advanced it further), the batch's
 * records of the lock below the new fence token become stale too: nothing has been handed to the application yet.
 * The fence therefore only moves when a record is accepted, and never past a record the application did not get.
 *
 * <p>A store that fails quarantines the records it was needed for ({@code store_unavailable}); records whose token
 * equals the fence token read before the failure are still accepted. Nothing here throws: Kafka would log an
 * interceptor's exception and hand over the unfiltered batch, so a failure of the fence itself quarantines every
 * fenced record of the batch instead (fail closed).
 */
final class RecordFence {

  private final KafkaFenceSettings settings;
  private final FenceStore store;
  private final KafkaFenceMetrics metrics;
  private final Set<String> locks;
  private final String fallbackLabel;
  private final TokenSignature signingKey;

  /** The batch's state of one lock. */
  private static final class Run {
    long seen;
    long running;
    /** The grant stored with {@code seen}, then the grant of the record that raised {@code running} (null: none). */
    String runningGrant;
    long overtakenBy;
    /** The check-and-advance found {@code running} stored under another grant. */
    boolean replayed;
    RuntimeException readFailure;
    RuntimeException advanceFailure;
  }

  /** The records to hand to the application and those refused. */
  record Outcome<K, V>(ConsumerRecords<K, V> accepted, List<Quarantine> quarantined) {
  }

  RecordFence(KafkaFenceSettings settings, FenceStore store, KafkaFenceMetrics metrics) {
    this.settings = settings;
    this.store = store;
    this.metrics = metrics;
    this.locks = settings.locks();
    this.signingKey = settings.policy().signingKey();
    this.fallbackLabel = KafkaFenceMetrics.fallbackLabel(locks);
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
    String[] grantOf = new String[n];
    long[] token = new long[n];
    long[] current = new long[n];
    boolean[] accepted = new boolean[n];
    Map<String, Run> runs = new HashMap<>();
    boolean strict = settings.strict();

    for (int i = 0; i < n; i++) {
      ConsumerRecord<K, V> r = all.get(i);
      if (!settings.fences(r.topic())) {
        continue;
      }
      TokenHeaders.Result h = FencingHeaders.read(r.headers(), locks, signingKey);
      lockOf[i] = h.lock();
      token[i] = h.token();
      grantOf[i] = h.grant();
      if (!h.isValid()) {
        if (h.rejection() != Rejection.MISSING_TOKEN || !settings.policy().permissive()) {
          reason[i] = h.rejection();
          detail[i] = h.detail();
        }
        continue;
      }
      Run run = runs.get(h.lock());
      if (run == null) {
        run = new Run();
        try {
          FenceState state = store.state(h.lock());
          run.seen = state.token();
          run.running = run.seen;
          run.runningGrant = state.grant();
        } catch (RuntimeException e) {
          run.readFailure = e;
        }
        runs.put(h.lock(), run);
      }
      if (run.readFailure != null) {
        reason[i] = Rejection.STORE_UNAVAILABLE;
        detail[i] = storeDetail(h.lock(), run.readFailure);
      } else if (h.token() < run.running || (strict && h.token() == run.running)) {
        reason[i] = Rejection.STALE_TOKEN;
        current[i] = run.running;
        detail[i] = staleDetail(h.lock(), h.token(), run.running);
      } else if (h.token() == run.running && run.runningGrant != null && !run.runningGrant.equals(h.grant())) {
        reason[i] = Rejection.REPLAYED_TOKEN;
        current[i] = run.running;
        detail[i] = replayedDetail(h.lock(), h.token(), h.grant());
      } else {
        if (h.token() > run.running) {
          run.running = h.token();
          run.runningGrant = h.grant();
        }
        accepted[i] = true;
      }
    }

    for (Map.Entry<String, Run> e : runs.entrySet()) {
      Run run = e.getValue();
      if (run.readFailure == null && run.running > run.seen) {
        try {
          Verdict v = store.check(e.getKey(), run.running, run.runningGrant, strict);
          if (v.outcome() == Verdict.Outcome.REPLAYED) {
            run.replayed = true; // another consumer advanced to this token first, for another grant
          } else if (!v.isAccepted()) {
            run.overtakenBy = v.current();
          }
        } catch (RuntimeException ex) {
          run.advanceFailure = ex;
        }
      }
    }

    boolean refused = false;
    for (int i = 0; i < n; i++) {
      if (accepted[i]) {
        Run run = runs.get(lockOf[i]);
        if (run.replayed && token[i] >= run.running) {
          accepted[i] = false;
          reason[i] = Rejection.REPLAYED_TOKEN;
          current[i] = run.running;
          detail[i] = replayedDetail(lockOf[i], token[i], grantOf[i]);
        } else if (run.replayed && token[i] > run.seen) {
          accepted[i] = false; // below the token the fence now holds (another consumer advanced to it)
          reason[i] = Rejection.STALE_TOKEN;
          current[i] = run.running;
          detail[i] = staleDetail(lockOf[i], token[i], run.running);
        } else if (run.overtakenBy > 0
            && (token[i] < run.overtakenBy || (strict && token[i] == run.overtakenBy))) {
          accepted[i] = false;
          reason[i] = Rejection.STALE_TOKEN;
          current[i] = run.overtakenBy;
          detail[i] = staleDetail(lockOf[i], token[i], run.overtakenBy);
        } else if (run.advanceFailure != null && token[i] > run.seen) {
          accepted[i] = false;
          reason[i] = Rejection.STORE_UNAVAILABLE;
          detail[i] = storeDetail(lockOf[i], run.advanceFailure);
        }
      }
      refused |= reason[i] != null;
    }
    if (!refused) {
      return new Outcome<>(records, List.of());
    }

    Map<TopicPartition, List<ConsumerRecord<K, V>>> kept = new LinkedHashMap<>();
    List<Quarantine> quarantined = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ConsumerRecord<K, V> r = all.get(i);
      if (reason[i] == null) {
        kept.computeIfAbsent(new TopicPartition(r.topic(), r.partition()), tp -> new ArrayList<>()).add(r);
      } else {
        String label = lockOf[i] != null ? lockOf[i] : fallbackLabel;
        metrics.reject(label, reason[i]);
        quarantined.add(new Quarantine(r, label, reason[i], detail[i], token[i], current[i]));
      }
    }
    return new Outcome<>(new ConsumerRecords<>(kept, records.nextOffsets()), quarantined);
  }

  /** The fence itself failed: every fenced record is quarantined, the others pass. */
  private <K, V> Outcome<K, V> failClosed(ConsumerRecords<K, V> records, List<ConsumerRecord<K, V>> all,
      RuntimeException e) {
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
    return new Outcome<>(new ConsumerRecords<>(kept, records.nextOffsets()), quarantined);
  }

  private static String staleDetail(String lock, long token, long current) {
    return token < current
        ? "token " + token + " for lock '" + lock + "' is lower than the fence token " + current
            + ": a newer lock holder has been here, this record comes from a stale one"
        : "token " + token + " for lock '" + lock + "' is not above the fence token " + current
            + " (strict mode: every record needs a new token)";
  }

  private static String replayedDetail(String lock, long token, String grant) {
    return "token " + token + " for lock '" + lock + "' was issued to another grant than this record's ("
        + (grant == null ? "none" : "'" + grant + "'") + "): the fence holds it for the grant that advanced it; a "
        + "coordinator restored from a snapshot gave the same token to a second holder";
  }

  private static String storeDetail(String lock, RuntimeException e) {
    return "the fence store could not check the token for lock '" + lock + "': " + e.getMessage();
  }
}
