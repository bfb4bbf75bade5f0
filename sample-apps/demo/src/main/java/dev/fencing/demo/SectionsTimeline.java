package dev.fencing.demo;

import static dev.fencing.demo.SectionsFacts.REPLICA_A;
import static dev.fencing.demo.SectionsFacts.REPLICA_B;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * Prints what happened in the sections story, for a reader who has not read the code: who held the settlement lock
 * when, every run of the job (from the job's own table) with the frozen run's refusal among them, and what the
 * order load's requests to each replica came to in each phase.
 */
final class SectionsTimeline {
  private final SectionsFacts f;
  private final Console console;

  SectionsTimeline(SectionsFacts facts, Console console) {
    this.f = facts;
    this.console = console;
  }

  void print() {
    holders();
    runs();
    requests();
  }

  private void holders() {
    console.heading("Who held lock '" + Replica.LOCK + "'");
    console.line("  time     replica-a                                 replica-b");
    row(f.aHoldingAt(), "HOLDING, token " + f.tokenA() + " (Spring starting)", "not started yet");
    row(f.bStandbyAt(), "HOLDING, token " + f.tokenA(), "STANDBY (Spring starting)");
    row(f.freezeAt(), "FROZEN (SIGSTOP) inside a run of the job", "STANDBY");
    row(f.takeoverAt(), "FROZEN, lease expired in etcd", "HOLDING, token " + f.tokenB());
    row(f.resumeAt(), "resumed: " + f.aWoke().state(), "HOLDING, token " + f.tokenB());
    row(f.endAt(), String.valueOf(f.finalA()), String.valueOf(f.finalB()));
  }

  private void row(long at, String a, String b) {
    console.line(String.format(Locale.ROOT, "  %s   %-41s %s", console.at(at), a, b));
  }

  /** The job's runs as settlement_run recorded them (each row: when its transaction began), with the events. */
  private void runs() {
    console.heading("The settlement job, run by run (the rows of settlement_run, and the run that wrote none)");
    console.line("  time     what happened");
    record Event(long at, String text) {}
    List<Event> events = new ArrayList<>();
    for (SectionsFacts.Run r : f.runs()) {
      events.add(new Event(r.startedAt(), String.format(Locale.ROOT, "row %-3d %s's run, token %s", r.id(),
          r.replica(), r.token() >= 0 ? Long.toString(r.token()) : "NONE")));
    }
    events.add(new Event(f.freezeAt(), "        replica-a frozen inside a run (its transaction open, its write to"
        + " come)"));
    events.add(new Event(f.takeoverAt(), "        replica-b takes the lock, token " + f.tokenB()));
    if (f.refusal() != null) {
      events.add(new Event(f.refusal().at(), "        replica-a's frozen run writes on waking: REFUSED, SQLSTATE "
          + f.refusal().sqlState()));
    }
    events.sort(Comparator.comparingLong(Event::at));
    for (Event e : events) {
      console.line("  " + console.at(e.at()) + "   " + e.text());
    }
    console.line("");
    console.line("  Runs skipped by the agent (fencing_section_skipped_total: the job's method returned at once,"
        + " the lock held elsewhere):");
    console.line("    replica-b on standby (counted before the freeze): " + f.skippedBefore(REPLICA_B)
        + "; replica-a after it woke: " + f.skippedSince(REPLICA_A) + ".");
    if (f.refusal() != null) {
      console.line("  The refused write, in replica-a's log:");
      console.line("    " + f.refusal().line());
      console.line("    " + f.refusal().sqlState() + ": " + f.refusal().meaning() + ".");
    }
  }

  private void requests() {
    console.heading("The order load (POST /orders to each replica every 50 ms; outside every section)");
    console.line(String.format(Locale.ROOT, "  %-38s %-28s %s", "phase", "replica-a", "replica-b"));
    phase("replica-b still starting", 0, f.bothUpAt());
    phase("both up, replica-a holding", f.bothUpAt(), f.freezeAt());
    phase("replica-a frozen", f.freezeAt(), f.resumeAt());
    phase("replica-a resumed, replica-b holding", f.resumeAt(), f.endAt() + 1);
    SectionsFacts.Orders a = f.orders().getOrDefault(REPLICA_A, new SectionsFacts.Orders(0, 0));
    SectionsFacts.Orders b = f.orders().getOrDefault(REPLICA_B, new SectionsFacts.Orders(0, 0));
    console.line(String.format(Locale.ROOT, "  %-38s %-28s %s", "rows in orders (with a token)",
        a.rows() + " (" + a.tagged() + ")", b.rows() + " (" + b.tagged() + ")"));
    for (OrderLoad.Request r : f.failedRequests()) {
      console.line("  FAILED " + console.at(r.at()) + " " + r.replica() + " " + r.item() + ": " + r.status() + " "
          + r.error());
    }
  }

  private void phase(String title, long from, long to) {
    console.line(String.format(Locale.ROOT, "  %-38s %-28s %s", title, served(REPLICA_A, from, to),
        served(REPLICA_B, from, to)));
  }

  private String served(String replica, long from, long to) {
    List<OrderLoad.Request> rs = f.requests(replica, from, to);
    if (rs.isEmpty()) {
      return replica.equals(REPLICA_A) && from == f.freezeAt() ? "- (frozen: none sent)"
          : replica.equals(REPLICA_B) && to == f.bothUpAt() ? "- (starting)" : "-";
    }
    long ok = rs.stream().filter(OrderLoad.Request::ok).count();
    return ok + " x 201" + (ok == rs.size() ? "" : ", " + (rs.size() - ok) + " FAILED");
  }
}
