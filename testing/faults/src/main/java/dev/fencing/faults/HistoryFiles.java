package dev.fencing.faults;

import dev.fencing.faults.History.Accepted;
import dev.fencing.faults.History.Attempt;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/** The run's history as tab-separated files beside the worker logs, for reading a violation after the fact. */
final class HistoryFiles {
  private HistoryFiles() {
  }

  static void write(Path dir, History h, List<String> trials, List<String> violations) {
    List<String> attempts = new ArrayList<>();
    attempts.add("write_id\tworker\tlock\tchannel\tstart_ms\tend_ms\tstate\ttoken_seen\toutcome\tdetail");
    for (Attempt a : h.attempts()) {
      attempts.add(String.join("\t", a.writeId(), a.worker(), a.lock(), a.channel(), Long.toString(a.startMs()),
          Long.toString(a.endMs()), a.state(), Long.toString(a.tokenSeen()), a.outcome().name(), a.detail()));
    }
    List<String> accepted = new ArrayList<>();
    accepted.add("resource\torder\twrite_id\tworker\tlock\ttoken\tat_ms\tpartition");
    List<Accepted> rows = new ArrayList<>(h.accepted());
    rows.addAll(h.unfenced()); // resource *-unfenced, order: arrival order
    for (Accepted r : rows) {
      String worker = r.writeId().substring(0, Math.max(0, r.writeId().lastIndexOf(':')));
      accepted.add(r.resource() + "\t" + r.order() + "\t" + r.writeId() + "\t" + worker + "\t" + r.lock()
          + "\t" + r.token() + "\t" + r.atMs() + "\t" + r.partition());
    }
    List<String> metrics = new ArrayList<>();
    h.agentMetrics().forEach((worker, m) -> metrics.add(worker + "\tblocked " + m.blocked() + "\trejected "
        + m.rejected()));
    h.fenceRejections().forEach((fence, n) -> metrics.add("fence " + fence + "\trejected " + n));
    metrics.add("pg_total.n\t" + h.pgCounter());
    try {
      Files.write(dir.resolve("attempts.tsv"), attempts);
      Files.write(dir.resolve("accepted.tsv"), accepted);
      Files.write(dir.resolve("quarantined.txt"), new TreeSet<>(h.quarantined()));
      Files.write(dir.resolve("metrics.txt"), metrics);
      Files.write(dir.resolve("trials.txt"), trials);
      Files.write(dir.resolve("violations.txt"), violations);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the history to " + dir, e);
    }
  }
}
