package dev.fencing.demo;

import dev.fencing.testing.AgentJvm;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The one-command demo ({@code scripts/demo.sh}): the split-brain story with real components, told so that a
 * newcomer sees what the agent and the fences do before reading any code; with {@code --sections}, the
 * declared-sections story on two Spring Boot replicas ({@link SectionsStory}). Exits 0 when every claim held, 1 with
 * the reason when one did not, 2 for bad arguments. Everything it starts is stopped at the end, and on Ctrl-C.
 */
public final class Demo {
  private Demo() {}

  /** How a run ended: the exit code, the checks (empty if the story broke before them), the failure if any. */
  record Outcome(int exitCode, List<EndStateChecks.Check> checks, String failure, double seconds) {}

  public static void main(String[] args) {
    DemoOptions options;
    try {
      if (List.of(args).contains("--help") || List.of(args).contains("-h")) {
        System.out.println(DemoOptions.USAGE);
        return;
      }
      options = DemoOptions.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("demo: " + e.getMessage());
      System.exit(2);
      return;
    }
    Resources resources = new Resources();
    // Ctrl-C: stop every process the demo started (a frozen worker included) before the JVM ends.
    Runtime.getRuntime().addShutdownHook(new Thread(resources::close, "demo-shutdown"));
    System.exit(run(options, new Console(), resources).exitCode());
  }

  /** Tells the story, checks it, prints the report and stops everything; used by {@link #main} and DemoIT. */
  static Outcome run(DemoOptions options, Console console, Resources resources) {
    return options.sections() ? runSections(options, console, resources) : runSplitBrain(options, console, resources);
  }

  private static Outcome runSplitBrain(DemoOptions options, Console console, Resources resources) {
    console.line("Fencing Agent demo" + (options.observe() ? " (observe mode)" : "") + ": a lock holder freezes past"
        + " its lease, a successor takes over, and the old holder wakes up with side effects in flight.");
    console.line(options.observe()
        ? "In observe mode the agent blocks nothing and counts what it would have blocked; the fences still reject"
            + " every stale write that reaches them."
        : "Every one of its stale side effects must be stopped: by its agent, by the database, by the service or by"
            + " the consumer.");
    Story story = new Story(options, console, resources);
    List<EndStateChecks.Check> checks = new ArrayList<>();
    String failure = null;
    try {
      Facts facts = story.run();
      new Timeline(facts, console).print();
      checks.addAll(EndStateChecks.run(facts));
      if (story.prometheus() != null) {
        List<String> firing = story.prometheus().firing();
        checks.add(new EndStateChecks.Check("Prometheus fired FencingStaleWriteRejected (seen by the stale worker's"
            + " agent) and FencingStaleWriteRejectedAtFence (by a fence)", firing.stream().anyMatch(s -> s.contains("observed_by=agent"))
                && firing.stream().anyMatch(s -> s.contains("observed_by=fence")), firing.size()
                + " alerts firing, listed above"));
      }
      Report.checks(console, checks);
      Report.metrics(console, facts);
      failure = firstFailed(checks);
    } catch (StoryBroken e) {
      failure = e.getMessage();
    } catch (RuntimeException | AssertionError e) {
      failure = e.toString();
    }
    return end(console, resources, story.jvms(), checks, failure, options.observe()
        ? "The story held in observe mode: the agent blocked nothing and counted every stale call it would have"
            + " blocked; the fences rejected every stale write that reached them."
        : "The story held: one holder at a time, a higher token after the takeover, and not one of the stale"
            + " holder's side effects took effect.");
  }

  private static Outcome runSections(DemoOptions options, Console console, Resources resources) {
    console.line("Fencing Agent demo (declared sections): two replicas of an ordinary Spring Boot service both serve"
        + " traffic, and only its scheduled job is leader-only, declared in the agent's configuration.");
    console.line("The job must run on one replica at a time, a frozen holder's late write must be refused, and"
        + " nothing else of either replica may be held up.");
    SectionsStory story = new SectionsStory(options, console, resources);
    List<EndStateChecks.Check> checks = new ArrayList<>();
    String failure = null;
    try {
      SectionsFacts facts = story.run();
      new SectionsTimeline(facts, console).print();
      checks.addAll(SectionsChecks.run(facts));
      Report.checks(console, checks);
      Report.metrics(console, facts.before(), facts.after());
      failure = firstFailed(checks);
    } catch (StoryBroken e) {
      failure = e.getMessage();
    } catch (RuntimeException | AssertionError e) {
      failure = e.toString();
    }
    return end(console, resources, story.jvms(), checks, failure, "The story held: every replica served every"
        + " request, the job ran on one replica at a time with a higher token after the takeover, and the frozen"
        + " holder's late write was refused.");
  }

  private static String firstFailed(List<EndStateChecks.Check> checks) {
    return checks.stream().filter(c -> !c.ok()).findFirst()
        .map(c -> "this claim did not hold: " + c.claim() + " (" + c.evidence() + ")").orElse(null);
  }

  /** Prints the log paths on a failure, stops everything, prints the verdict. */
  private static Outcome end(Console console, Resources resources, List<AgentJvm> jvms,
      List<EndStateChecks.Check> checks, String failure, String held) {
    if (failure != null && resources.closing()) {
      failure = "interrupted: every process the demo started has been stopped";
    } else if (failure != null) {
      console.line("");
      for (AgentJvm jvm : jvms) {
        console.line("  log of " + jvm.logFile().getFileName() + ": " + jvm.logFile());
      }
    }
    console.line("");
    console.say("Stopping every process the demo started ...");
    resources.close();
    int code = failure == null ? 0 : 1;
    console.line(failure == null ? held : "The demo FAILED: " + failure);
    double seconds = (System.currentTimeMillis() - console.startMillis()) / 1000.0;
    console.line(String.format(Locale.ROOT, "Finished in %.1f s, exit code %d.", seconds, code));
    return new Outcome(code, checks, failure, seconds);
  }
}
