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
 * java.instrument, for premain) and nothing else of the agent's own modules but the protocol module, which is
 * java.base only itself and relocated inside the agent jar (docs/DESIGN.md section 3).
 */
class BootstrapDependenciesTest {
  @Test
  void theBootstrapPartUsesJavaBaseAndJavaInstrumentOnly() {
    Path classes = Path.of("target/classes");
    assertThat(Files.isDirectory(classes)).as("compiled bootstrap classes at " + classes.toAbsolutePath()).isTrue();
    // the one module of ours it may use: the protocol (header names, token grammar), itself java.base only
    Path protocol = Path.of("../../protocol/target/classes");
    assertThat(Files.isDirectory(protocol)).as("compiled protocol classes at " + protocol.toAbsolutePath()).isTrue();
    ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow(
        () -> new AssertionError("jdeps not found: run the tests with a full JDK (17 or later)"));

    StringWriter out = new StringWriter();
    int rc = jdeps.run(new PrintWriter(out), new PrintWriter(out), "--list-deps", classes.toString(), protocol.toString());
    assertThat(rc).as(out.toString()).isZero();
    assertThat(out.toString().lines().map(String::trim).filter(l -> !l.isEmpty()))
        .as("modules the bootstrap part uses").containsOnly("java.base", "java.instrument");

    StringWriter classDeps = new StringWriter();
    jdeps.run(new PrintWriter(classDeps), new PrintWriter(classDeps), "-verbose:class", "-filter:none",
        classes.toString(), protocol.toString());
    assertThat(classDeps.toString()).as("a class outside the JDK, this module and the protocol").doesNotContain("not found");
  }
}
