package dev.fencing.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The attach command's argument errors, before anything is attached (the rest: AttachCommandIT). */
class AttachCliTest {
  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
  private final PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);

  private int run(String... args) {
    return Cli.run(args, out);
  }

  private String printed() {
    return bytes.toString(StandardCharsets.UTF_8);
  }

  @Test
  void withoutAPidItPrintsItsUsage() {
    assertThat(run("attach")).isEqualTo(2);
    assertThat(printed()).startsWith("usage: attach <pid> [key=value ...]");
  }

  @Test
  void aPidMustBeAPositiveNumber() {
    assertThat(run("attach", "ledger-worker", "lock=a")).isEqualTo(2);
    assertThat(run("attach", "-5")).isEqualTo(2);
    assertThat(printed()).contains("attach: 'ledger-worker' is not a process id: expected a positive number")
        .contains("attach: '-5' is not a process id");
  }

  @Test
  void settingsAreKeyValuePairs() {
    assertThat(run("attach", "4711", "ledger")).isEqualTo(2);
    assertThat(printed()).contains("attach: 'ledger' is not a setting: expected key=value (e.g. lock=ledger)");
  }

  @Test
  void notThisProcessNorOneThatIsGone() throws Exception {
    assertThat(run("attach", Long.toString(ProcessHandle.current().pid()), "lock=a")).isEqualTo(2);
    assertThat(printed()).contains("is this process");
    Process gone = new ProcessBuilder("true").start();
    gone.waitFor();
    assertThat(run("attach", Long.toString(gone.pid()), "lock=a")).isEqualTo(1);
    assertThat(printed()).contains("attach: no process with pid " + gone.pid());
  }

  @Test
  void switchedOffThereIsNothingToAttach() {
    assertThat(run("attach", "4711", "lock=a", "enabled=false")).isEqualTo(1);
    assertThat(printed()).contains("attach: not attached: enabled=false keeps the agent out of the JVM it is loaded into");
  }

  @Test
  void doctorNotesTheSwitch() {
    run("doctor", "enabled=false", "lease.enabled=false", "etcd.timeout=1s", "etcd.endpoints=http://127.0.0.1:1");
    assertThat(printed()).contains("  NOTE fencing.enabled=false (agent argument enabled): the agent stays out of a JVM"
        + " with these settings");
  }

  @Test
  void helpListsIt() {
    assertThat(run("--help")).isZero();
    assertThat(printed()).contains("attach      attach <pid> [key=value ...]");
  }
}
