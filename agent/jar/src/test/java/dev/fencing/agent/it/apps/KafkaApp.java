package dev.fencing.agent.it.apps;

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
 *       record's headers first, preexisting gives it fencing-token/fencing-lock headers of its own, resend sends the
 *       same record object twice. Answers {@code OK <offset> callerHeaders=[...]} or {@code ERR <exception>}.</li>
 *   <li>{@code SENDCB <topic> <key>}: send(record, callback); answers what the callback and then the future saw:
 *       {@code CB partition=<p> offset=<o> error=<exception> FUTURE <OK|ERR ...>}.</li>
 *   <li>{@code TXN <abort-on-error|commit-anyway> <topic>:<key> ...}: one transaction of a transactional producer;
 *       on a failed send, abort-on-error aborts; commit-anyway commits regardless (and aborts if the commit fails).
 *       Answers {@code TXN sends=[...] COMMITTED|ABORTED|COMMIT-FAILED <exception> ABORTED}.</li>
 * </ul>
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

  private static String send(KafkaProducer<String, String> producer, String topic, String key, String mode) {
    ProducerRecord<String, String> r = record(topic, key);
    if (mode.equals("preexisting")) {
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
    producer.beginTransaction();
    List<String> sends = new ArrayList<>();
    boolean failed = false;
    for (String tk : records) {
      String[] p = tk.split(":");
      try {
        producer.send(record(p[0], p[1])).get(30, TimeUnit.SECONDS);
        sends.add("OK");
      } catch (Exception e) {
        sends.add("ERR " + describe(e));
        failed = true;
      }
    }
    String answer = "TXN sends=" + sends;
    if (failed && end.equals("abort-on-error")) {
      producer.abortTransaction();
      return answer + " ABORTED";
    }
    try {
      producer.commitTransaction();
      return answer + " COMMITTED";
    } catch (Exception e) {
      producer.abortTransaction();
      return answer + " COMMIT-FAILED " + describe(e) + " ABORTED";
    }
  }

  public static void main(String[] args) throws Exception {
    Map<String, Object> config = Map.of("bootstrap.servers", args[0], "max.block.ms", "15000", "linger.ms", "0");
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
          case "TXN":
            if (transactional == null) {
              Map<String, Object> tx = new java.util.HashMap<>(config);
              tx.put("transactional.id", "kafka-app-" + ProcessHandle.current().pid());
              transactional = new KafkaProducer<>(tx, new StringSerializer(), new StringSerializer());
              transactional.initTransactions();
            }
            answer = transaction(transactional, p[1], java.util.Arrays.copyOfRange(p, 2, p.length));
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
