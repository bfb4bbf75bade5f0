package dev.fencing.agent.cli;

import java.io.File;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.Properties;

/**
 * {@code attach <pid> [key=value ...]}: loads the agent into a running JVM through the JDK's Attach API, after
 * {@code doctor}'s checks of the same settings passed. Exit 0 attached, 1 not (doctor found a problem, no such
 * process, the target refused or cannot take the agent), 2 bad arguments.
 *
 * <p>The Attach API lives in the module jdk.attach, which a JDK has and a JRE or a trimmed runtime image may lack:
 * only {@link AttachApi} names its classes, and it is touched only once the module is known to be there.
 */
final class AttachCli {
  static final String USAGE = "usage: attach <pid> [key=value ...]  (the agent's keys, as for -javaagent)";
  private static final int MIN_JAVA = 17;

  private AttachCli() {}

  static int run(String[] args, PrintStream out, Doctor doctor) {
    if (args.length == 0 || args[0].equals("--help") || args[0].equals("-h")) {
      out.println(USAGE);
      out.println("Runs doctor's checks of these settings, then loads the agent into the running JVM <pid> (same user,"
          + " Java " + MIN_JAVA + "+, attach not disabled). The target also reads its own -Dfencing.* properties,"
          + " FENCING_* variables and fencing.config.file.");
      return args.length == 0 ? 2 : 0;
    }
    long pid;
    try {
      pid = Long.parseLong(args[0]);
      if (pid <= 0) {
        throw new NumberFormatException();
      }
    } catch (NumberFormatException e) {
      out.println("attach: '" + args[0] + "' is not a process id: expected a positive number");
      out.println(USAGE);
      return 2;
    }
    String[] settings = Arrays.copyOfRange(args, 1, args.length);
    for (String s : settings) {
      if (s.indexOf('=') <= 0) {
        out.println("attach: '" + s + "' is not a setting: expected key=value (e.g. lock=ledger)");
        out.println(USAGE);
        return 2;
      }
    }
    for (String s : settings) {
      String key = s.substring(0, s.indexOf('=')).trim();
      if ((key.equals("enabled") || key.equals("fencing.enabled"))
          && s.substring(s.indexOf('=') + 1).trim().equalsIgnoreCase("false")) {
        out.println("attach: not attached: " + s + " keeps the agent out of the JVM it is loaded into");
        return 1;
      }
    }
    if (ModuleLayer.boot().findModule("jdk.attach").isEmpty()) {
      out.println("attach: this Java (" + System.getProperty("java.home") + ", " + System.getProperty("java.version")
          + ") has no Attach API (module jdk.attach): run attach with the java of a JDK, e.g. the JDK the target runs on");
      return 1;
    }
    if (pid == ProcessHandle.current().pid()) {
      out.println("attach: " + pid + " is this process: give the pid of the JVM to attach to (jps -l lists them)");
      return 2;
    }
    if (!ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
      out.println("attach: no process with pid " + pid + " (jps -l lists the JVMs this user runs)");
      return 1;
    }
    File jar = agentJar();
    if (jar == null) {
      out.println("attach: cannot tell which jar this command runs from: run it as java -jar <path>/fencing-agent.jar");
      return 1;
    }
    String options = String.join(",", settings);
    out.println("doctor " + String.join(" ", settings) + ":");
    if (doctor.check(settings, out) != 0) {
      out.println("attach: not attached to " + pid + ": doctor found a problem (above)");
      return 1;
    }
    return AttachApi.attach(pid, jar, options, MIN_JAVA, out);
  }

  /** What attach runs first: doctor's checks with the same settings. */
  interface Doctor {
    int check(String[] settings, PrintStream out);
  }

  /** The agent jar this command runs from ({@code java -jar fencing-agent.jar attach ...}), absolute, or null. */
  private static File agentJar() {
    try {
      File f = new File(AttachCli.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      if (f.isFile() && f.getName().endsWith(".jar")) {
        return f.getCanonicalFile();
      }
    } catch (Exception | LinkageError e) {
      // below
    }
    String command = System.getProperty("sun.java.command", "");
    String first = command.split(" ", 2)[0];
    File f = new File(first);
    try {
      return first.endsWith(".jar") && f.isFile() ? f.getCanonicalFile() : null;
    } catch (java.io.IOException e) {
      return null;
    }
  }

  /** The only class naming com.sun.tools.attach: loaded only where jdk.attach is present. */
  static final class AttachApi {
    private AttachApi() {}

    static int attach(long pid, File jar, String options, int minJava, PrintStream out) {
      com.sun.tools.attach.VirtualMachine vm;
      try {
        vm = com.sun.tools.attach.VirtualMachine.attach(Long.toString(pid));
      } catch (com.sun.tools.attach.AttachNotSupportedException | java.io.IOException | SecurityException e) {
        out.println("attach: cannot attach to pid " + pid + " (" + e.getMessage() + "): is it a HotSpot JVM (Java "
            + minJava + "+) run by this user (" + System.getProperty("user.name") + "), started without"
            + " -XX:+DisableAttachMechanism, and is its temporary directory (/tmp) the one this process sees?");
        return 1;
      }
      try {
        Properties target = vm.getSystemProperties();
        String version = target.getProperty("java.specification.version", "?");
        int feature = feature(version);
        String main = String.valueOf(target.getProperty("sun.java.command", "?")).split(" ", 2)[0];
        if (feature < minJava) {
          out.println("attach: not attached: pid " + pid + " (" + main + ") runs Java " + version + " from "
              + target.getProperty("java.home") + "; the agent needs Java " + minJava + " or newer");
          return 1;
        }
        vm.loadAgent(jar.getPath(), options);
        out.println("attach: loaded " + jar + " into pid " + pid + " (" + main + ", Java " + version
            + "); the agent logs to that JVM's standard error" + endpoint(options));
        return 0;
      } catch (com.sun.tools.attach.AgentLoadException | com.sun.tools.attach.AgentInitializationException e) {
        out.println("attach: pid " + pid + " could not start the agent (" + e + "): see its standard error");
        return 1;
      } catch (java.io.IOException | RuntimeException e) {
        out.println("attach: lost pid " + pid + " while loading the agent (" + e + ")");
        return 1;
      } finally {
        try {
          vm.detach();
        } catch (java.io.IOException e) {
          // the agent is loaded or not; nothing left to do with the connection
        }
      }
    }

    private static int feature(String specVersion) {
      try {
        return Integer.parseInt(specVersion.startsWith("1.") ? specVersion.substring(2) : specVersion);
      } catch (NumberFormatException e) {
        return Integer.MAX_VALUE; // a future scheme: let the agent itself say whether it can run
      }
    }

    private static String endpoint(String options) {
      for (String part : options.split(",")) {
        String p = part.trim();
        if (p.startsWith("http.port=") || p.startsWith("fencing.http.port=")) {
          return "; its status endpoint is on port " + p.substring(p.indexOf('=') + 1) + " (/status, /ready)";
        }
      }
      return "";
    }
  }
}
