package dev.fencing.agent;

import java.io.File;
import java.io.IOException;
import java.lang.module.Configuration;
import java.lang.module.ResolvedModule;
import java.util.jar.JarFile;
import java.util.jar.Manifest;

/**
 * Tells, from the launcher's {@code sun.java.command} (the main class or jar, then the program's arguments), whether
 * this JVM runs one of the JDK's own tools or the agent jar's command line rather than an application. Only the main
 * class is read, never the arguments, and no class is loaded.
 *
 * <p>A JDK tool is a main class of a JDK module: every launcher in a JDK's {@code bin} names one (jcmd
 * {@code jdk.jcmd/sun.tools.jcmd.JCmd}, keytool {@code java.base/sun.security.tools.keytool.Main}), and so do the JVMs a
 * tool starts with the plain {@code java} launcher (jshell runs its snippets in one whose main class is
 * {@code jdk.jshell.execution.RemoteExecutionControl}). JDK modules are the boot layer's modules named {@code java.*}
 * or {@code jdk.*}, names the platform reserves; an application's own module in a jlinked image is not one of them.
 */
final class JdkTools {
  private JdkTools() {}

  /** The JDK tool's main class ({@code module/class} or {@code class}) this JVM runs, or null. */
  static String jdkTool(String command) {
    return jdkTool(command, ModuleLayer.boot().configuration());
  }

  /** As {@link #jdkTool(String)}, with the modules of {@code modules} (the boot layer's, or a test's). */
  static String jdkTool(String command, Configuration modules) {
    String main = mainOf(command);
    if (main == null || main.endsWith(".jar")) {
      return null;
    }
    int slash = main.indexOf('/');
    if (slash >= 0) {
      String module = main.substring(0, slash);
      return isJdkModuleName(module) && modules.findModule(module).isPresent() ? main : null;
    }
    int dot = main.lastIndexOf('.');
    if (dot <= 0) {
      return null; // the unnamed package is never the JDK's
    }
    return holdsJdkPackage(modules, main.substring(0, dot)) ? main : null;
  }

  private static boolean holdsJdkPackage(Configuration modules, String pkg) {
    for (ResolvedModule m : modules.modules()) {
      if (isJdkModuleName(m.name()) && m.reference().descriptor().packages().contains(pkg)) {
        return true;
      }
    }
    for (Configuration parent : modules.parents()) {
      if (holdsJdkPackage(parent, pkg)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The agent jar run as a program ({@code java -jar fencing-agent.jar doctor}): this very jar, or a copy whose name
   * starts with fencing-agent and whose manifest names this class as its main class.
   */
  static boolean agentCommandLine(String command, File agentJar) {
    String main = mainOf(command);
    if (main == null || !main.endsWith(".jar")) {
      return false;
    }
    File jar = new File(main);
    try {
      if (agentJar != null && jar.getCanonicalFile().equals(agentJar.getCanonicalFile())) {
        return true;
      }
      if (!jar.getName().startsWith("fencing-agent") || !jar.isFile()) {
        return false;
      }
      try (JarFile j = new JarFile(jar, false)) {
        Manifest m = j.getManifest();
        return m != null && FencingAgent.class.getName().equals(m.getMainAttributes().getValue("Main-Class"));
      }
    } catch (IOException | SecurityException e) {
      return false;
    }
  }

  /** The first word of the command: the main class or the jar. */
  private static String mainOf(String command) {
    if (command == null || command.isBlank()) {
      return null; // a JVM not started by the java launcher (JNI): an application
    }
    String c = command.trim();
    int space = c.indexOf(' ');
    return space < 0 ? c : c.substring(0, space);
  }

  private static boolean isJdkModuleName(String name) {
    return name != null && (name.startsWith("java.") || name.startsWith("jdk."));
  }
}
