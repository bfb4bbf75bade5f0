package dev.fencing.agent.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * The bootstrap part is appended to the boot class path of every JVM the agent joins and its classes are referred
 * to from advice inlined into the JDK and the application's libraries: it may use the JDK's java.base (and
 * java.instrument, for premain) and nothing else, not even the agent's own other modules (docs/DESIGN.md section 3).
 */
class BootstrapDependenciesTest {
  @Test
  void theBootstrapPartUsesJavaBaseAndJavaInstrumentOnly() {
    Path classes = Path.of("target/classes");
    assertThat(Files.isDirectory(classes)).as("compiled bootstrap classes at " + classes.toAbsolutePath()).isTrue();
    ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow(
        () -> new AssertionError("jdeps not found: run the tests with a full JDK (17 or later)"));

    StringWriter out = new StringWriter();
    int rc = jdeps.run(new PrintWriter(out), new PrintWriter(out), "--list-deps", classes.toString());
    assertThat(rc).as(out.toString()).isZero();
    assertThat(out.toString().lines().map(String::trim).filter(l -> !l.isEmpty()))
        .as("modules the bootstrap part uses").containsOnly("java.base", "java.instrument");

    StringWriter classDeps = new StringWriter();
    jdeps.run(new PrintWriter(classDeps), new PrintWriter(classDeps), "-verbose:class", "-filter:none",
        classes.toString());
    assertThat(classDeps.toString()).as("a class outside the JDK and this module").doesNotContain("not found");
  }
}
