package dev.fencing.agent.it.release;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The release command (scripts/release.sh) in its dry-run mode: from a copy of the working tree it builds the agent
 * and the fence libraries at the given version, with their checksums, the version in the agent's manifest and in
 * {@code --version}, and a changelog entry; the working tree itself is left as it was.
 */
class ReleaseIT {
  private static final String VERSION = "9.8.7-rc.1";
  private static final List<String> JARS = List.of("fencing-agent-" + VERSION + ".jar",
      "fencing-protocol-" + VERSION + ".jar", "fencing-fence-store-" + VERSION + ".jar",
      "fencing-fence-sql-" + VERSION + ".jar", "fencing-fence-http-" + VERSION + ".jar",
      "fencing-fence-kafka-" + VERSION + ".jar", "fencing-fence-spring-boot-starter-" + VERSION + ".jar",
      "fencing-dashboards-" + VERSION + ".jar", "fencing-api-" + VERSION + ".jar");

  @TempDir
  Path out;

  static Path repositoryRoot() {
    return Path.of(System.getProperty("fencing.dashboards.dir")).toAbsolutePath().normalize().getParent();
  }

  private static Result release(Path root, Path out, String... args) throws Exception {
    List<String> cmd = new java.util.ArrayList<>(List.of("bash", root.resolve("scripts/release.sh").toString()));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(root.toFile()).redirectErrorStream(true);
    pb.environment().put("RELEASE_MVN_ARGS", "-o"); // everything it needs is in the local repository already
    pb.redirectOutput(out.resolve("release.log").toFile());
    Process p = pb.start();
    p.getOutputStream().close();
    if (!p.waitFor(20, TimeUnit.MINUTES)) {
      p.destroyForcibly();
      throw new AssertionError("release.sh did not finish within 20 minutes; log: " + out.resolve("release.log"));
    }
    return new Result(p.exitValue(), Files.readString(out.resolve("release.log")));
  }

  record Result(int exit, String output) {}

  @Test
  void aDryRunBuildsTheJarsChecksumsManifestVersionAndChangelogAndLeavesTheTreeAlone() throws Exception {
    Path root = repositoryRoot();
    Path dist = out.resolve("dist");
    String pomBefore = Files.readString(root.resolve("pom.xml"));
    boolean changelogBefore = Files.exists(root.resolve("CHANGELOG.md"));
    String changelogText = changelogBefore ? Files.readString(root.resolve("CHANGELOG.md")) : null;

    Result r = release(root, out, VERSION, "--dry-run", "--out", dist.toString());
    assertThat(r.exit()).as(r.output()).isZero();

    Map<String, String> sums = new LinkedHashMap<>();
    for (String line : Files.readAllLines(dist.resolve("SHA256SUMS"))) {
      String[] parts = line.split(" {2}", 2);
      sums.put(parts[1], parts[0]);
    }
    assertThat(sums.keySet()).containsExactlyInAnyOrderElementsOf(JARS);
    for (String jar : JARS) {
      assertThat(sums.get(jar)).as("SHA-256 of " + jar).isEqualTo(sha256(dist.resolve(jar)));
    }

    try (JarFile agent = new JarFile(dist.resolve("fencing-agent-" + VERSION + ".jar").toFile())) {
      assertThat(agent.getManifest().getMainAttributes().getValue("Implementation-Version")).isEqualTo(VERSION);
      assertThat(agent.getManifest().getMainAttributes().getValue("Premain-Class"))
          .isEqualTo("dev.fencing.agent.FencingAgent");
    }
    Process v = new ProcessBuilder(javaBin().toString(), "-jar", dist.resolve("fencing-agent-" + VERSION + ".jar").toString(),
        "--version").redirectErrorStream(true).start();
    String said = new String(v.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    assertThat(v.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(said).startsWith("fencing-agent " + VERSION + " (java ").endsWith(", coordinator etcd)");

    // A fence library as a service adds it: its Maven coordinates and version are in the jar.
    try (JarFile http = new JarFile(dist.resolve("fencing-fence-http-" + VERSION + ".jar").toFile())) {
      Properties p = new Properties();
      p.load(http.getInputStream(http.getEntry("META-INF/maven/dev.fencing/fencing-fence-http/pom.properties")));
      assertThat(p).containsEntry("groupId", "dev.fencing").containsEntry("artifactId", "fencing-fence-http")
          .containsEntry("version", VERSION);
      assertThat(http.stream().anyMatch(e -> e.getName().startsWith("dev/fencing/fence/http/"))).isTrue();
    }

    String changelog = Files.readString(dist.resolve("CHANGELOG.md"));
    assertThat(changelog).startsWith("# Changelog\n\n## " + VERSION + " (");
    assertThat(changelog).contains("`fencing-agent-" + VERSION + ".jar` `" + sums.get("fencing-agent-" + VERSION + ".jar") + "`");

    // The dry run worked on a copy: the tree's version and changelog are untouched.
    assertThat(Files.readString(root.resolve("pom.xml"))).isEqualTo(pomBefore);
    assertThat(Files.exists(root.resolve("CHANGELOG.md"))).isEqualTo(changelogBefore);
    if (changelogBefore) {
      assertThat(Files.readString(root.resolve("CHANGELOG.md"))).isEqualTo(changelogText);
    }
  }

  @Test
  void aSnapshotOrMalformedVersionIsRefusedSayingWhatIsExpected() throws Exception {
    for (String bad : List.of("1.0.0-SNAPSHOT", "v1.2", "1.2")) {
      Result r = release(repositoryRoot(), out, bad, "--dry-run", "--out", out.resolve("x").toString());
      assertThat(r.exit()).as(bad).isEqualTo(2);
      assertThat(r.output()).contains("'" + bad + "' is not a release version: expected MAJOR.MINOR.PATCH");
    }
  }

  private static Path javaBin() {
    return Path.of(System.getProperty("java.home"), "bin", "java");
  }

  private static String sha256(Path file) throws IOException, java.security.NoSuchAlgorithmException {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
  }
}
