package dev.fencing.agent;

import dev.fencing.agent.bootstrap.BlockReason;
import dev.fencing.agent.bootstrap.CoreEntry;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import java.io.File;
import java.io.IOException;
import java.lang.instrument.Instrumentation;
import java.lang.reflect.InvocationTargetException;
import java.net.URL;
import java.util.jar.JarFile;

/**
 * Entry point of {@code fencing-agent.jar}: {@code -javaagent} (premain), dynamic attach (agentmain) and the CLI
 * ({@code java -jar fencing-agent.jar doctor}). It only wires class loaders and hands over to the core; everything slow
 * (etcd, metrics, the HTTP endpoint) starts later on daemon threads.
 */
public final class FencingAgent {
  private static final String CORE_STARTER = "dev.fencing.agent.startup.AgentStarter";
  private static final String CORE_CLI = "dev.fencing.agent.cli.Cli";
  private static final String STARTER_ENTRY = AgentClassLoader.PREFIX + CORE_STARTER.replace('.', '/') + ".classdata";

  private FencingAgent() {}

  public static void premain(String args, Instrumentation inst) {
    start(args, inst, false);
  }

  public static void agentmain(String args, Instrumentation inst) {
    start(args, inst, true);
  }

  /** The CLI: {@code doctor}, {@code --help}. */
  public static void main(String[] args) throws Exception {
    JarFile jar = openAgentJar();
    ClassLoader loader = new AgentClassLoader(jar, urlOf(jar), FencingAgent.class.getClassLoader());
    Thread.currentThread().setContextClassLoader(loader);
    int exit;
    try {
      exit = (Integer) loader.loadClass(CORE_CLI).getMethod("run", String[].class).invoke(null, (Object) args);
    } catch (InvocationTargetException e) {
      throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
    }
    System.exit(exit);
  }

  private static void start(String args, Instrumentation inst, boolean dynamic) {
    long startNanos = System.nanoTime();
    EarlySettings settings = EarlySettings.ofThisJvm(args);
    AgentSwitch agentSwitch = new AgentSwitch(settings);
    try {
      // First of all, before the agent touches the JVM: whether it stays out of it.
      if (agentSwitch.stayOut(dynamic, System.getProperty("sun.java.command"), ownJar())) {
        return;
      }
    } catch (RuntimeException | LinkageError e) {
      // deciding is never a reason not to start
    }
    try {
      JarFile jar = openAgentJar();
      offerOtelExtension(jar);
      // The bootstrap part must be visible to JDK classes (java.net.http, HttpURLConnection) that hooks run in.
      inst.appendToBootstrapClassLoaderSearch(jar);
      if (!Fencing.markStarted()) {
        agentSwitch.alreadyAttached();
        return;
      }
      ClassLoader loader = new AgentClassLoader(jar, urlOf(jar), FencingAgent.class.getClassLoader());
      // Initialising the core's starter class offers its entry: called directly, not by reflection (CoreEntry).
      Class.forName(CORE_STARTER, true, loader);
      CoreEntry.Start core = CoreEntry.take();
      if (core == null) {
        throw new IllegalStateException(CORE_STARTER + " offered no entry");
      }
      core.start(args, inst, dynamic, startNanos);
    } catch (Throwable t) {
      Throwable cause = t instanceof ExceptionInInitializerError && t.getCause() != null ? t.getCause() : t;
      EarlySettings.Setting failMode = settings.get(EarlySettings.FAIL_MODE);
      boolean open = failMode != null && "open".equalsIgnoreCase(failMode.value);
      Fencing.installFallback(open ? Decision.pass("(unknown)") : Decision.block("(unknown)", 0, BlockReason.AGENT_FAILED));
      System.err.println("[fencing-agent] ERROR the agent failed to start (" + cause + "); the application runs on, "
          + (open ? "side effects pass untagged (fencing.fail-mode=open)" : "side effects are blocked (fencing.fail-mode=closed)"));
    }
  }

  /**
   * Lets the OpenTelemetry Java agent load our extension (a span processor stamping client spans with fencing.lock and
   * fencing.token): extracts {@code otel/fencing-otel-extension.jar} from this jar to a temporary file and adds it to
   * {@code otel.javaagent.extensions}. Only effective when this premain runs first ({@code -javaagent:fencing-agent.jar}
   * before the OpenTelemetry agent), since that agent reads the setting in its own premain; in the other order users
   * name the extension themselves (docs/reference/metrics.md).
   */
  static void offerOtelExtension(JarFile jar) {
    try {
      String key = "otel.javaagent.extensions";
      String current = System.getProperty(key);
      if (current == null) {
        current = System.getenv("OTEL_JAVAAGENT_EXTENSIONS"); // the property wins over the variable: keep both
      }
      if (current != null && current.contains("fencing-otel-extension")) {
        return; // named by the user
      }
      if (!otelAgentRequested()) {
        return; // a guest leaves no property and no file behind in JVMs without the OpenTelemetry agent
      }
      java.util.zip.ZipEntry entry = jar.getEntry("otel/fencing-otel-extension.jar");
      if (entry == null) {
        return;
      }
      java.nio.file.Path file = java.nio.file.Files.createTempFile("fencing-otel-extension", ".jar");
      file.toFile().deleteOnExit();
      try (java.io.InputStream in = jar.getInputStream(entry)) {
        java.nio.file.Files.copy(in, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      }
      String path = file.toAbsolutePath().toString();
      System.setProperty(key, current == null || current.isBlank() ? path : current + "," + path);
    } catch (Exception | LinkageError e) {
      // span attributes are a nicety, never a reason not to start
    }
  }

  /**
   * True when this JVM is told to load the OpenTelemetry Java agent: a -javaagent naming it on the command line (read
   * from /proc, no management beans in premain) or in JAVA_TOOL_OPTIONS / JDK_JAVA_OPTIONS (how operators inject it).
   */
  static boolean otelAgentRequested() {
    java.util.List<String> sources = new java.util.ArrayList<>();
    String[] arguments = commandLine();
    if (arguments != null) {
      sources.addAll(java.util.Arrays.asList(arguments));
    }
    sources.add(System.getenv("JAVA_TOOL_OPTIONS"));
    sources.add(System.getenv("JDK_JAVA_OPTIONS"));
    for (String s : sources) {
      if (s != null && s.contains("-javaagent") && s.contains("opentelemetry")) {
        return true;
      }
    }
    return false;
  }

  /**
   * This JVM's arguments (the options after the executable), or null when they cannot be read. On Linux from
   * {@code /proc/self/cmdline} with java.io, whose classes the JVM has loaded already; elsewhere through
   * {@link ProcessHandle}, whose first use starts the JDK's process machinery (a thread pool, about 40 classes that
   * are not in the JDK's class data archive), a few milliseconds of premain on every start.
   */
  static String[] commandLine() {
    java.io.File cmdline = new java.io.File("/proc/self/cmdline");
    if (cmdline.isFile()) {
      try (java.io.FileInputStream in = new java.io.FileInputStream(cmdline)) {
        return arguments(in.readAllBytes());
      } catch (IOException | RuntimeException e) {
        // read below
      }
    }
    return ProcessHandle.current().info().arguments().orElse(null);
  }

  /** The arguments after the executable in a NUL-separated command line (the form of /proc/<pid>/cmdline). */
  static String[] arguments(byte[] cmdline) {
    String all = new String(cmdline, java.nio.charset.StandardCharsets.UTF_8);
    if (all.endsWith("\0")) {
      all = all.substring(0, all.length() - 1);
    }
    int first = all.indexOf('\0');
    return first < 0 ? new String[0] : all.substring(first + 1).split("\0", -1);
  }

  /**
   * The jar that holds the core ({@code inst/}). Usually the jar this class came from; but when the application's own
   * class path carries an unshaded copy of this class (a build that puts fencing-agent-bootstrap on the class path),
   * the system loader finds that copy first, and the agent jar is the one appended for -javaagent: found by its entry.
   */
  private static JarFile openAgentJar() throws Exception {
    File own = ownJar();
    if (own != null && own.isFile()) {
      JarFile jar = new JarFile(own);
      if (jar.getEntry(STARTER_ENTRY) != null) {
        return jar;
      }
      jar.close();
    }
    java.util.Enumeration<URL> found = ClassLoader.getSystemClassLoader().getResources(STARTER_ENTRY);
    while (found.hasMoreElements()) {
      String url = found.nextElement().toExternalForm();
      if (url.startsWith("jar:file:") && url.contains("!/")) {
        return new JarFile(new File(new URL(url.substring(4, url.indexOf("!/"))).toURI()));
      }
    }
    throw new IllegalStateException("no jar on the class path holds " + STARTER_ENTRY + " (" + own
        + " has none): is -javaagent pointing at the shaded fencing-agent.jar?");
  }

  /** Where this class was loaded from (the agent jar, or an unshaded copy on the class path), or null. */
  private static File ownJar() {
    try {
      return new File(FencingAgent.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (Exception | LinkageError e) {
      return null;
    }
  }

  private static URL urlOf(JarFile jar) throws Exception {
    return new File(jar.getName()).toURI().toURL();
  }
}
