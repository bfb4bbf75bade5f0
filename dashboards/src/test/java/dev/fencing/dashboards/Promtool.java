package dev.fencing.dashboards;

import static org.assertj.core.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs the real promtool (Debian package prometheus); a missing promtool fails the test with how to install it. */
final class Promtool {
  record Result(int exitCode, String output) {
  }

  private Promtool() {
  }

  static Path binary() {
    String configured = System.getenv("PROMTOOL");
    if (configured != null && !configured.isBlank()) {
      Path p = Path.of(configured);
      if (!Files.isExecutable(p)) {
        fail("PROMTOOL=" + configured + " is not an executable file");
      }
      return p;
    }
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      Path p = Path.of(dir.isEmpty() ? "." : dir, "promtool");
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    return fail("promtool is not on PATH: the dashboard and alert tests run it. Install it with "
        + "'apt-get update && apt-get install -y prometheus' (Debian; or run scripts/prerequisites.sh), "
        + "or set PROMTOOL to its path");
  }

  /** Runs {@code promtool args...} in {@code dir}, output and errors merged. */
  static Result run(Path dir, String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(binary().toString());
    cmd.addAll(List.of(args));
    try {
      Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
      p.getOutputStream().close();
      byte[] out = p.getInputStream().readAllBytes();
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return fail("promtool " + String.join(" ", args) + " did not finish within 60 s");
      }
      return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
