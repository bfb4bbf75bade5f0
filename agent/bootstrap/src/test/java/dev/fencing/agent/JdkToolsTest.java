package dev.fencing.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class JdkToolsTest {
  /** sun.java.command of the JDK 17 and 25 launchers, and of the JVM jshell starts for its snippets. */
  @ParameterizedTest
  @ValueSource(strings = {"jdk.jcmd/sun.tools.jcmd.JCmd 4711 VM.version", "jdk.jcmd/sun.tools.jps.Jps -l",
      "java.base/sun.security.tools.keytool.Main -list", "jdk.jshell/jdk.internal.jshell.tool.JShellToolProvider -q",
      "jdk.jartool/sun.tools.jar.Main --version", "jdk.compiler/com.sun.tools.javac.Main -version",
      "jdk.jshell.execution.RemoteExecutionControl 43219", "jdk.jfr/jdk.jfr.internal.tool.Main summary x.jfr"})
  void theJdksToolsAreTools(String command) {
    assertThat(JdkTools.jdkTool(command, TOOLS)).isEqualTo(command.substring(0, command.indexOf(' ')));
  }

  /**
   * A tool's module is in the boot layer of the JVM the tool's launcher starts; a class-path application's boot layer
   * (this test's) leaves out the JDK modules that export nothing, such as jdk.jcmd: a configuration above it resolves
   * them here.
   */
  private static final java.lang.module.Configuration TOOLS = ModuleLayer.boot().configuration().resolve(
      java.lang.module.ModuleFinder.ofSystem(), java.lang.module.ModuleFinder.of(),
      java.util.Set.of("jdk.jcmd", "jdk.jshell", "jdk.jartool", "jdk.compiler", "jdk.jfr"));

  @ParameterizedTest
  @ValueSource(strings = {"com.acme.Main", "com.acme.Main --port 8080", "/app/app.jar", "app.jar serve",
      "org.springframework.boot.loader.launch.JarLauncher", "com.acme.app/com.acme.Main",
      "jdk.acme/com.acme.Main", "Main", "", " ",
      // a class in a JDK-looking package that no JDK module holds
      "jdk.acme.Main", "sun.acme.Main"})
  void applicationsAreNotTools(String command) {
    assertThat(JdkTools.jdkTool(command)).isNull();
    assertThat(JdkTools.jdkTool(command, TOOLS)).isNull();
  }

  @Test
  void noCommandIsAnApplication() {
    assertThat(JdkTools.jdkTool(null)).isNull();
    assertThat(JdkTools.agentCommandLine(null, null)).isFalse();
  }

  @Test
  void theAgentJarRunAsAProgramIsTheAgentsCommandLine(@TempDir Path dir) throws Exception {
    Path agent = jar(dir.resolve("fencing-agent.jar"), FencingAgent.class.getName());
    Path copy = jar(dir.resolve("fencing-agent-0.1.0.jar"), FencingAgent.class.getName());
    Path app = jar(dir.resolve("app.jar"), "com.acme.Main");
    Path lookalike = jar(dir.resolve("fencing-agent-app.jar"), "com.acme.Main");
    File agentFile = agent.toFile();
    assertThat(JdkTools.agentCommandLine(agent + " doctor lock=x", agentFile)).isTrue();
    assertThat(JdkTools.agentCommandLine(dir.resolve("sub/../fencing-agent.jar") + " attach 1", agentFile)).isTrue();
    assertThat(JdkTools.agentCommandLine(copy + " --version", agentFile)).isTrue();
    assertThat(JdkTools.agentCommandLine(app + " serve", agentFile)).isFalse();
    assertThat(JdkTools.agentCommandLine(lookalike.toString(), agentFile)).isFalse();
    assertThat(JdkTools.agentCommandLine("com.acme.Main", agentFile)).isFalse();
    assertThat(JdkTools.agentCommandLine(dir.resolve("missing.jar").toString(), agentFile)).isFalse();
  }

  private static Path jar(Path path, String mainClass) throws Exception {
    Files.createDirectories(path.getParent().resolve("sub"));
    Manifest m = new Manifest();
    m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    m.getMainAttributes().put(Attributes.Name.MAIN_CLASS, mainClass);
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(path), m)) {
      // the manifest is enough
    }
    return path;
  }
}
