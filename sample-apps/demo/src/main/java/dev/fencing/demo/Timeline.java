package dev.fencing.demo;

import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Prints what happened, for a reader who has not read the code: who held which token when, what each worker's side
 * effects came to in each phase, and every side effect the stale worker-a attempted after it was resumed, with what
 * stopped it.
 */
final class Timeline {
  private final Facts f;
  private final Console console;

  Timeline(Facts facts, Console console) {
    this.f = facts;
    this.console = console;
  }

  void print() {
    holders();
    phases();
    staleAttempts();
  }

  private void holders() {
    console.heading("Who held the lock");
    console.line("  time     worker-a                                  worker-b");
    row(f.aHoldingAt(), "HOLDING, token " + f.tokenA(), "STANDBY (waiting for the lock)");
    row(f.freezeAt(), "FROZEN (SIGSTOP), lease running out", "STANDBY");
    row(f.takeoverAt(), "FROZEN, lease expired in etcd", "HOLDING, token " + f.tokenB());
    row(f.resumeAt(), "resumed: " + f.aWoke().state() + " (knew within " + f.aKnewWithinMs() + " ms)",
        "HOLDING, token " + f.tokenB());
    row(f.drainedAt(), f.finalA().state() + (f.finalA().lastLossReason() == null ? ""
        : " (lost: " + f.finalA().lastLossReason() + ")"), f.finalB().state() + ", token " + f.finalB().token());
  }

  private void row(long at, String a, String b) {
    console.line(String.format(Locale.ROOT, "  %s   %-41s %s", console.at(at), a, b));
  }

  private void phases() {
    console.heading("What the side effects came to, by phase");
    phase("worker-a starting (may not hold the lock yet)", f.aStarting());
    phase("worker-a holding token " + f.tokenA() + ", before the freeze", f.aHoldingBeforeFreeze());
    phase("worker-b before the takeover (STANDBY)",
        f.b().stream().filter(e -> e.at() < f.takeoverAt()).toList());
    phase("worker-b holding token " + f.tokenB(), f.b().stream().filter(e -> e.at() >= f.takeoverAt()).toList());
    phase("worker-a after resuming, with stale token " + f.tokenA(), f.aAfterResume());
  }

  private void phase(String title, List<SideEffect> effects) {
    Map<Verdict.Kind, Long> counts = new EnumMap<>(Verdict.Kind.class);
    for (SideEffect e : effects) {
      counts.merge(Verdict.of(e, f).kind(), 1L, Long::sum);
    }
    String summary = counts.entrySet().stream().map(e -> e.getValue() + " " + e.getKey().label)
        .collect(Collectors.joining(", "));
    console.line(String.format(Locale.ROOT, "  %-50s %3d attempted: %s", title, effects.size(),
        effects.isEmpty() ? "-" : summary));
  }

  private void staleAttempts() {
    List<SideEffect> stale = f.aAfterResume();
    console.heading("Every side effect worker-a attempted after resuming, and what stopped it");
    console.line("  (time after SIGCONT, the transfer number, the side effect, its fate)");
    for (SideEffect e : stale) {
      console.line(String.format(Locale.ROOT, "  +%5d ms  transfer %-3d  %-20s %s", e.at() - f.resumeAt(),
          e.transfer(), e.what(), Verdict.of(e, f).sentence()));
    }
    long ordered = stale.stream().filter(e -> Verdict.of(e, f).kind() == Verdict.Kind.BEFORE_SUCCESSOR).count();
    long inFlight = stale.stream().filter(e -> Verdict.of(e, f).kind() == Verdict.Kind.IN_FLIGHT).count();
    long reached = stale.stream().filter(e -> Verdict.of(e, f).kind() == Verdict.Kind.ACCEPTED).count();
    console.line("");
    console.line("  The topic '" + Infrastructure.TOPIC + "' is listed in fencing.fenced.kafka: after its lease expired"
        + " the agent still sends worker-a's events, with the old token, for the consumer fence to judge (an unlisted"
        + " topic would be blocked by the agent, like the webhook call).");
    console.line("  The webhook via the outbox is a row written in the transfer's own transaction: when the fence"
        + " rejects the transfer, the row rolls back with it, so the relay has nothing to deliver. The direct webhook call"
        + " is stopped only by worker-a's agent, at its deadline.");
    console.line("  " + reached + " of worker-a's " + (stale.size() - ordered - inFlight) + " stale side effects took"
        + " effect" + (f.observe() && reached > 0
            ? ": the webhook calls, which observe mode lets out (enforce mode blocks them)." : ".")
        + (ordered > 0 ? " " + ordered + " more were accepted by a resource that had not seen worker-b's token yet:"
            + " the fences ordered them before all of worker-b's writes, as fencing promises." : "")
        + (inFlight > 0 ? " The side effect in flight at the freeze had left before it." : ""));
  }
}
