package dev.fencing.fence.sql;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.fence.store.SqlDialect;
import dev.fencing.protocol.SqlStates;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The {@code sql} CLI runs where H2 is absent (the agent jar bundles this module without H2): printing or installing
 * an H2 fence must not load {@link H2FenceTrigger}, which implements H2's trigger interface and only runs inside H2.
 */
class SqlPrintWithoutH2Test {

  @Test
  void h2PrintRunsWithoutH2OnTheClassPath() throws Exception {
    // this module with its run-time dependencies (the shared store and the protocol), and nothing else
    URL[] classes = {location(SqlFenceDdl.class), location(SqlDialect.class), location(SqlStates.class)};
    try (URLClassLoader loader = new URLClassLoader(classes, ClassLoader.getPlatformClassLoader())) {
      assertThat(loader.getResource("org/h2/api/Trigger.class")).as("H2 is not visible").isNull();
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
      Object code = loader.loadClass(SqlFenceCli.class.getName())
          .getMethod("run", String[].class, PrintStream.class)
          .invoke(null, new String[] {"print", "--dialect", "h2", "--table", "orders", "--lock", "ledger"}, out);
      assertThat(code).isEqualTo(0);
      assertThat(bytes.toString(StandardCharsets.UTF_8))
          .contains("CALL '" + H2FenceTrigger.class.getName() + "'");
      assertThat(SqlFenceDdl.H2_TRIGGER_CLASS).isEqualTo(H2FenceTrigger.class.getName());
    }
  }

  private static URL location(Class<?> type) {
    return type.getProtectionDomain().getCodeSource().getLocation();
  }
}
