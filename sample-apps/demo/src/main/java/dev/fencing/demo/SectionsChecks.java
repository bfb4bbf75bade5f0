package dev.fencing.demo;

import static dev.fencing.demo.SectionsFacts.REPLICA_A;
import static dev.fencing.demo.SectionsFacts.REPLICA_B;

import dev.fencing.demo.EndStateChecks.Check;
import java.util.ArrayList;
import java.util.List;

/**
 * The claims of the sections story, each checked against the job's table, the orders table, the load's answers and
 * the agents' counters (not the replicas' word). The story holds when every check passes.
 */
final class SectionsChecks {
  private final SectionsFacts f;
  private final List<Check> checks = new ArrayList<>();

  private SectionsChecks(SectionsFacts facts) {
    this.f = facts;
  }

  static List<Check> run(SectionsFacts facts) {
    SectionsChecks c = new SectionsChecks(facts);
    c.startup();
    c.holders();
    c.oneHolderAtATime();
    c.standbySkipped();
    c.frozenRunRefused();
    c.wokenSkips();
    c.everyOrderServed();
    c.ordersUntouched();
    c.nothingElseRefused();
    return c.checks;
  }

  private void check(String claim, boolean ok, String evidence) {
    checks.add(new Check(claim, ok, evidence));
  }

  private void startup() {
    check("both replicas started and made their startup writes (Spring's SQL init), replica-b on standby too",
        f.replicaStarts().stream().filter(REPLICA_A::equals).count() == 1
            && f.replicaStarts().stream().filter(REPLICA_B::equals).count() == 1,
        "replica_start rows: " + f.replicaStarts());
  }

  private void holders() {
    check("replica-b took over with a higher token while replica-a was frozen, and replica-a never held the lock"
            + " again",
        f.tokenB() > f.tokenA() && f.takeoverAt() < f.resumeAt() && !f.aWoke().holding() && f.finalA() != null
            && !f.finalA().holding() && f.finalB() != null && f.finalB().holding() && f.finalB().token() == f.tokenB(),
        "tokens " + f.tokenA() + " -> " + f.tokenB() + "; replica-a after resuming: " + f.aWoke().state()
            + ", at the end: " + f.finalA() + "; replica-b at the end: " + f.finalB());
  }

  private void oneHolderAtATime() {
    List<SectionsFacts.Run> a = f.runsOf(REPLICA_A);
    List<SectionsFacts.Run> b = f.runsOf(REPLICA_B);
    boolean tokens = a.stream().allMatch(r -> r.token() == f.tokenA()) && b.stream().allMatch(r -> r.token()
        == f.tokenB());
    long lastA = a.stream().mapToLong(SectionsFacts.Run::id).max().orElse(0);
    long firstB = b.stream().mapToLong(SectionsFacts.Run::id).min().orElse(Long.MAX_VALUE);
    check("the job ran on the lock holder only: replica-a's runs carry token " + f.tokenA() + ", replica-b's carry"
            + " token " + f.tokenB() + " and all come after replica-a's",
        !a.isEmpty() && !b.isEmpty() && tokens && lastA < firstB && a.size() + b.size() == f.runs().size(),
        f.runs().size() + " runs: replica-a " + a.size() + " " + tokens(a) + ", replica-b " + b.size() + " "
            + tokens(b) + (a.isEmpty() || b.isEmpty() ? "" : "; last of replica-a row " + lastA + ", first of"
                + " replica-b row " + firstB));
  }

  private void standbySkipped() {
    check("replica-b's agent skipped the job while replica-a held the lock (the void method returned at once)",
        f.skippedBefore(REPLICA_B) > 0,
        "fencing_section_skipped_total{lock=\"" + Replica.LOCK + "\"} of replica-b before the freeze: "
            + f.skippedBefore(REPLICA_B));
  }

  private void frozenRunRefused() {
    List<SectionsFacts.Run> late = f.aRunsAfterFreeze();
    check("the run replica-a was frozen in was refused when it woke, and replica-a wrote no settlement row after"
            + " the freeze",
        f.refusal() != null && late.isEmpty(),
        (f.refusal() == null ? "no refusal in replica-a's log" : "SQLSTATE " + f.refusal().sqlState() + ": "
            + f.refusal().meaning()) + "; rows of replica-a after row " + f.lastRunBeforeFreeze() + ": "
            + late.size());
  }

  private void wokenSkips() {
    check("after waking, replica-a's agent skipped the job: it no longer holds the lock",
        f.skippedSince(REPLICA_A) > 0,
        "fencing_section_skipped_total{lock=\"" + Replica.LOCK + "\"} of replica-a since the freeze: +"
            + f.skippedSince(REPLICA_A));
  }

  private void everyOrderServed() {
    long bStandby = ok(f.requests(REPLICA_B, 0, f.takeoverAt()));
    long bFreeze = ok(f.requests(REPLICA_B, f.freezeAt(), f.resumeAt()));
    long aAfter = ok(f.requests(REPLICA_A, f.resumeAt(), Long.MAX_VALUE));
    List<OrderLoad.Request> failed = f.failedRequests();
    check("both replicas served every order of the load, before, during and after the handover (replica-b on"
            + " standby too, replica-a after it woke)",
        failed.isEmpty() && f.okRequests(REPLICA_A) > 0 && bStandby > 0 && bFreeze > 0 && aAfter > 0,
        f.requests().size() + " requests, " + failed.size() + " failed" + (failed.isEmpty() ? ""
            : " (first: " + failed.get(0) + ")") + "; 201s of replica-a " + f.okRequests(REPLICA_A) + " ("
            + aAfter + " after it woke), of replica-b " + f.okRequests(REPLICA_B) + " (" + bStandby
            + " on standby, " + bFreeze + " while replica-a was frozen)");
  }

  private void ordersUntouched() {
    SectionsFacts.Orders a = f.orders().getOrDefault(REPLICA_A, new SectionsFacts.Orders(0, 0));
    SectionsFacts.Orders b = f.orders().getOrDefault(REPLICA_B, new SectionsFacts.Orders(0, 0));
    check("every 201 is one row in orders, and no order carries a token: outside the section the agent leaves the"
            + " writes alone",
        a.rows() == f.okRequests(REPLICA_A) && b.rows() == f.okRequests(REPLICA_B) && a.tagged() == 0
            && b.tagged() == 0 && f.orders().size() == 2,
        "orders rows: replica-a " + a.rows() + " (201s " + f.okRequests(REPLICA_A) + "), replica-b " + b.rows()
            + " (201s " + f.okRequests(REPLICA_B) + "); with a token: " + (a.tagged() + b.tagged()));
  }

  /** Blocked side effects by the agents' own count: at most the frozen run's write, nothing outside the section. */
  private void nothingElseRefused() {
    long outsideA = blocked(REPLICA_A, "none");
    long outsideB = blocked(REPLICA_B, "none");
    long inSectionA = blocked(REPLICA_A, Replica.LOCK);
    long inSectionB = blocked(REPLICA_B, Replica.LOCK);
    check("the agents blocked nothing outside the section, and in it at most the frozen run's write",
        outsideA == 0 && outsideB == 0 && inSectionB == 0 && inSectionA <= 1,
        "fencing_side_effects_total{outcome=\"blocked\"}: replica-a " + outsideA + " outside, " + inSectionA
            + " in the section; replica-b " + outsideB + " outside, " + inSectionB + " in the section");
  }

  private long blocked(String replica, String lock) {
    return Math.round(f.after().value(replica, "fencing_side_effects_total", "lock", lock, "outcome", "blocked"));
  }

  private static long ok(List<OrderLoad.Request> requests) {
    return requests.stream().filter(OrderLoad.Request::ok).count();
  }

  private static String tokens(List<SectionsFacts.Run> runs) {
    return "(tokens " + runs.stream().map(r -> r.token() >= 0 ? Long.toString(r.token()) : "none").distinct()
        .toList() + ")";
  }
}
