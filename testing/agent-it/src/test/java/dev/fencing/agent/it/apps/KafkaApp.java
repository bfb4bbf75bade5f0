package dev.fencing.agent.it.apps;

import dev.fencing.it.kafka.KafkaSections;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * An ordinary Kafka producer application (no fencing code) driven over stdin; every answer is one line starting
 * with {@code "> "}. Argument: bootstrap servers. Commands:
 * <ul>
 *   <li>{@code SEND <topic> <key> <plain|readonly|preexisting|resend>}: send(record).get(); readonly seals the
 *       record's headers first, preexisting gives it another holder's token headers in both forms (fencing,
 *       fencing-token, fencing-lock, fencing-grant), resend sends the same record object twice. Answers {@code OK <offset> callerHeaders=[...]} or {@code ERR <exception>}.</li>
 *   <li>{@code SENDCB <topic> <key>}: send(record, callback); answers what the callback and then the future saw:
 *       {@code CB partition=<p> offset=<o> error=<exception> FUTURE <OK|ERR ...>}.</li>
 *   <li>{@code TXN <abort-on-error|commit-anyway> <topic>:<key> ...}: one transaction of a transactional producer;
 *       on a failed send, abort-on-error aborts; commit-anyway commits regardless (and aborts if the commit fails).
 *       Answers {@code TXN sends=[...] COMMITTED|ABORTED|COMMIT-FAILED <exception> ABORTED}.</li>
 *   <li>{@code TXN-OPEN <topic>:<key> ...}: begins a transaction and sends each record, waiting for it
 *       ({@code send().get()}), and leaves the transaction open; {@code TXN-COMMIT} commits it (aborting it when the
 *       commit fails). Answers {@code TXN-OPEN sends=[...]}, {@code TXN COMMITTED|COMMIT-FAILED <exception> ABORTED}.</li>
 *   <li>{@code BURST <topic> <prefix> <n>}: n sends with callbacks (keys prefix-0 .. prefix-n-1), not waited for;
 *       answers {@code SENT <n>}.</li>
 *   <li>{@code OUTCOMES <prefix>}: waits (60 s at most) until every callback and future of that burst completed;
 *       answers {@code OUTCOMES ok=<keys> err=<key: exception> ...}, callbacks first, then any future that disagrees
 *       with its callback as {@code future-mismatch=...}.</li>
 *   <li>{@code DRAINED}: waits (10 s at most) until the producer's I/O thread has taken every record sent so far out
 *       of its buffer into a request (producer metric {@code record-send-total}); answers {@code DRAINED <n>} or
 *       {@code ERR still buffered ...}. A test freezes the broker, sends one record and asks this before it relies on
 *       that record's request being in flight.</li>
 * </ul>
 * Further arguments after the bootstrap servers are producer settings, {@code key=value}.
 */
public final class KafkaApp {
  private KafkaApp() {}

  private static String describe(Throwable t) {
    Throwable e = t instanceof ExecutionException && t.getCause() != null ? t.getCause() : t;
    return e.getClass().getName() + ": " + e.getMessage()
        + (e.getCause() != null ? " (cause " + e.getCause().getClass().getName() + ")" : "");
  }

  private static List<String> headerKeys(ProducerRecord<String, String> r) {
    List<String> keys = new ArrayList<>();
    for (Header h : r.headers()) {
      keys.add(h.key());
    }
    return keys;
  }

  private static ProducerRecord<String, String> record(String topic, String key) {
    ProducerRecord<String, String> r = new ProducerRecord<>(topic, key, "value-" + key);
    r.headers().add("x-app", key.getBytes(StandardCharsets.UTF_8));
    return r;
  }

  /** Records handed to the main producer's send() so far. */
  private static final java.util.concurrent.atomic.AtomicLong SENDS = new java.util.concurrent.atomic.AtomicLong();

  private static String drained(KafkaProducer<String, String> producer) throws InterruptedException {
    long sends = SENDS.get();
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    double taken = 0;
    while (System.nanoTime() < end) {
      taken = producer.metrics().entrySet().stream()
          .filter(e -> e.getKey().name().equals("record-send-total") && e.getKey().group().equals("producer-metrics"))
          .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue()).findFirst().orElse(0);
      if (taken >= sends) {
        return "DRAINED " + (long) taken;
      }
      Thread.sleep(10);
    }
    return "ERR still buffered: record-send-total " + (long) taken + " of " + sends + " sent";
  }

  private static String send(KafkaProducer<String, String> producer, String topic, String key, String mode) {
    SENDS.incrementAndGet();
    ProducerRecord<String, String> r = record(topic, key);
    if (mode.equals("preexisting")) {
      r.headers().add("fencing", "1;someone-else".getBytes(StandardCharsets.US_ASCII));
      r.headers().add("fencing-token", "1".getBytes(StandardCharsets.US_ASCII));
      r.headers().add("fencing-lock", "someone-else".getBytes(StandardCharsets.UTF_8));
      r.headers().add("fencing-token", "2".getBytes(StandardCharsets.US_ASCII));
      r.headers().add("fencing-grant", "not-this-grant".getBytes(StandardCharsets.US_ASCII));
    } else if (mode.equals("readonly")) {
      ((RecordHeaders) r.headers()).setReadOnly();
    }
    try {
      RecordMetadata m = producer.send(r).get(30, TimeUnit.SECONDS);
      if (mode.equals("resend")) {
        m = producer.send(r).get(30, TimeUnit.SECONDS); // the first send sealed the record's headers
      }
      return "OK " + m.offset() + " callerHeaders=" + headerKeys(r);
    } catch (Exception e) {
      return "ERR " + describe(e);
    }
  }

  private static String sendWithCallback(KafkaProducer<String, String> producer, String topic, String key) {
    SENDS.incrementAndGet();
    CompletableFuture<String> seen = new CompletableFuture<>();
    Future<RecordMetadata> future = producer.send(record(topic, key), (metadata, error) ->
        seen.complete("partition=" + (metadata == null ? "null" : metadata.partition()) + " offset="
            + (metadata == null ? "null" : metadata.offset()) + " error=" + (error == null ? "none" : describe(error))));
    String result;
    try {
      result = "OK " + future.get(30, TimeUnit.SECONDS).offset();
    } catch (Exception e) {
      result = "ERR " + describe(e);
    }
    try {
      return "CB " + seen.get(30, TimeUnit.SECONDS) + " FUTURE " + result;
    } catch (Exception e) {
      return "CB (no callback: " + describe(e) + ") FUTURE " + result;
    }
  }

  private static String transaction(KafkaProducer<String, String> producer, String end, String[] records) {
    List<String> sends = begin(producer, records);
    boolean failed = sends.stream().anyMatch(s -> !s.equals("OK"));
    String answer = "TXN sends=" + sends;
    if (failed && end.equals("abort-on-error")) {
      producer.abortTransaction();
      return answer + " ABORTED";
    }
    return answer + commit(producer);
  }

  /** Begins a transaction and sends {@code records} ({@code topic:key}) in it, each acknowledged before the next. */
  private static List<String> begin(KafkaProducer<String, String> producer, String[] records) {
    producer.beginTransaction();
    List<String> sends = new ArrayList<>();
    for (String tk : records) {
      String[] p = tk.split(":");
      try {
        producer.send(record(p[0], p[1])).get(30, TimeUnit.SECONDS);
        sends.add("OK");
      } catch (Exception e) {
        sends.add("ERR " + describe(e));
      }
    }
    return sends;
  }

  /** Commits the transaction in progress; aborts it when the commit fails. */
  private static String commit(KafkaProducer<String, String> producer) {
    try {
      producer.commitTransaction();
      return " COMMITTED";
    } catch (Exception e) {
      producer.abortTransaction();
      return " COMMIT-FAILED " + describe(e) + " ABORTED";
    }
  }

  /** One BURST: per key, what its callback saw (null until called) and its future. */
  private static final Map<String, Map<String, String>> CALLBACKS = new java.util.concurrent.ConcurrentHashMap<>();
  private static final Map<String, Map<String, Future<RecordMetadata>>> FUTURES = new java.util.HashMap<>();

  /** Sends {@code n} records keyed {@code prefix-i}, noting each one's outcome for {@code OUTCOMES prefix}. */
  public static String burst(KafkaProducer<String, String> producer, String topic, String prefix, int n) {
    Map<String, String> seen = new java.util.concurrent.ConcurrentHashMap<>();
    Map<String, Future<RecordMetadata>> futures = new java.util.LinkedHashMap<>();
    CALLBACKS.put(prefix, seen);
    FUTURES.put(prefix, futures);
    for (int i = 0; i < n; i++) {
      SENDS.incrementAndGet();
      String key = prefix + "-" + i;
      futures.put(key, producer.send(record(topic, key),
          (metadata, error) -> seen.put(key, error == null ? "OK" : "ERR " + describe(error))));
    }
    return "SENT " + n;
  }

  private static String outcomes(String prefix) throws InterruptedException {
    Map<String, String> seen = CALLBACKS.get(prefix);
    Map<String, Future<RecordMetadata>> futures = FUTURES.get(prefix);
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (seen.size() < futures.size() && System.nanoTime() < end) {
      Thread.sleep(20);
    }
    List<String> ok = new ArrayList<>();
    List<String> err = new ArrayList<>();
    List<String> mismatch = new ArrayList<>();
    for (Map.Entry<String, Future<RecordMetadata>> e : futures.entrySet()) {
      String cb = seen.get(e.getKey());
      if (cb == null) {
        err.add(e.getKey() + ": no callback");
      } else if (cb.equals("OK")) {
        ok.add(e.getKey());
      } else {
        err.add(e.getKey() + ": " + cb.substring(4));
      }
      String f;
      try {
        e.getValue().get(1, TimeUnit.SECONDS);
        f = "OK";
      } catch (Exception x) {
        f = "ERR " + describe(x);
      }
      if (cb != null && !cb.equals(f)) {
        mismatch.add(e.getKey() + ": callback " + cb + " future " + f);
      }
    }
    return "OUTCOMES ok=" + ok + " err=" + err + (mismatch.isEmpty() ? "" : " future-mismatch=" + mismatch);
  }

  public static void main(String[] args) throws Exception {
    Map<String, Object> config = new java.util.HashMap<>(Map.of("bootstrap.servers", args[0], "max.block.ms", "15000",
        "linger.ms", "0"));
    for (int i = 1; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      config.put(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    KafkaProducer<String, String> producer = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer());
    KafkaProducer<String, String> transactional = null;
    System.out.println("APP STARTED");
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      String[] p = line.split(" ");
      String answer;
      try {
        switch (p[0]) {
          case "SEND":
            answer = send(producer, p[1], p[2], p[3]);
            break;
          case "SENDCB":
            answer = sendWithCallback(producer, p[1], p[2]);
            break;
          case "BURST":
            answer = burst(producer, p[1], p[2], Integer.parseInt(p[3]));
            break;
          case "BURST-A":
            answer = KafkaSections.burstInA(producer, p[1], p[2], Integer.parseInt(p[3]));
            break;
          case "BURST-B":
            answer = KafkaSections.burstInB(producer, p[1], p[2], Integer.parseInt(p[3]));
            break;
          case "OUTCOMES":
            answer = outcomes(p[1]);
            break;
          case "DRAINED":
            answer = drained(producer);
            break;
          case "TXN":
          case "TXN-OPEN":
          case "TXN-COMMIT":
            if (transactional == null) {
              Map<String, Object> tx = new java.util.HashMap<>(config);
              tx.put("transactional.id", "kafka-app-" + ProcessHandle.current().pid());
              transactional = new KafkaProducer<>(tx, new StringSerializer(), new StringSerializer());
              transactional.initTransactions();
            }
            answer = p[0].equals("TXN") ? transaction(transactional, p[1], java.util.Arrays.copyOfRange(p, 2, p.length))
                : p[0].equals("TXN-OPEN") ? "TXN-OPEN sends=" + begin(transactional,
                    java.util.Arrays.copyOfRange(p, 1, p.length))
                : "TXN" + commit(transactional);
            break;
          default:
            answer = "ERR unknown command " + p[0];
        }
      } catch (Exception e) {
        answer = "ERR " + describe(e);
      }
      System.out.println("> " + answer);
      System.out.flush();
    }
    producer.close();
    if (transactional != null) {
      transactional.close();
    }
  }
}
