package dev.fencing.agent.status;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * What this agent is: its version (written into the jar by the build), the Java it runs on and the coordinator it
 * holds its lease in. Shown by the startup log line, {@code --version} and {@code fencing_build_info}.
 */
public record BuildInfo(String version, String java, String coordinator) {
  /** Stands for a version the build did not record (classes run outside a Maven build). */
  public static final String UNKNOWN = "unknown";

  private static final String VERSION = readVersion();

  /** This agent's version and the running JVM's, with {@code coordinator} (e.g. {@code etcd}). */
  public static BuildInfo current(String coordinator) {
    return new BuildInfo(VERSION, Runtime.version().toString(), coordinator);
  }

  /** The agent's version, from the properties file the build filters; {@link #UNKNOWN} when it is missing. */
  public static String agentVersion() {
    return VERSION;
  }

  private static String readVersion() {
    try (InputStream in = BuildInfo.class.getResourceAsStream("build.properties")) {
      if (in == null) {
        return UNKNOWN;
      }
      Properties p = new Properties();
      p.load(in);
      String v = p.getProperty("version", "").trim();
      // An unfiltered copy (an IDE's) still says ${project.version}: not a version.
      return v.isEmpty() || v.startsWith("${") ? UNKNOWN : v;
    } catch (IOException | RuntimeException e) {
      return UNKNOWN;
    }
  }

  /** One line for the log and {@code --version}: {@code fencing-agent 0.1.0 (java 17.0.12+7, coordinator etcd)}. */
  public String describe() {
    return "fencing-agent " + version + " (java " + java + ", coordinator " + coordinator + ")";
  }
}
