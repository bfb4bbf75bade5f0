package dev.fencing.agent;

import java.io.File;
import java.util.Locale;

/**
 * Whether the agent stays out of this JVM, decided in premain before anything of the agent is set up (no boot class
 * path entry, no transformer, no thread, no port, no class of the core): {@code fencing.enabled=false}; a JDK tool or
 * the agent jar's own command line started with the agent in {@code JAVA_TOOL_OPTIONS}; a second attach of the agent.
 * Each says why in one line on standard error, at the level its audience wants: an operator's switch at INFO, a tool
 * at DEBUG (a tool's output is read by people and scripts, and the JVM already printed its "Picked up
 * JAVA_TOOL_OPTIONS" line).
 */
final class AgentSwitch {
  private static final String[] LEVELS = {"ERROR", "WARN", "INFO", "DEBUG", "TRACE"};
  private static final int INFO = 2;
  private static final int DEBUG = 3;

  private final EarlySettings settings;

  AgentSwitch(EarlySettings settings) {
    this.settings = settings;
  }

  /**
   * True when the agent must stay out, having said why. {@code command} is the launcher's sun.java.command,
   * {@code agentJar} the jar this class came from (null when unknown).
   */
  boolean stayOut(boolean dynamic, String command, File agentJar) {
    EarlySettings.Setting enabled = settings.get(EarlySettings.ENABLED);
    if (enabled != null && "false".equalsIgnoreCase(enabled.value)) {
      log(INFO, "off (fencing.enabled=false, " + enabled.source + "): the agent leaves this JVM untouched");
      return true;
    }
    if (dynamic) {
      return false; // attached on purpose
    }
    if (JdkTools.agentCommandLine(command, agentJar)) {
      log(DEBUG, "not started in the agent's own command line");
      return true;
    }
    String tool = JdkTools.jdkTool(command);
    if (tool != null && !settings.isTrue(EarlySettings.JDK_TOOLS_ENABLED)) {
      log(DEBUG, "not started in the JDK tool " + tool + " (fencing.jdk-tools.enabled=true starts it)");
      return true;
    }
    return false;
  }

  /** The agent is already in this JVM (a second -javaagent, or an attach after one). */
  void alreadyAttached() {
    log(1, "already attached to this JVM; ignoring the second attach");
  }

  /** One line as the core's log writes it, at fencing.log.level (info when unset or malformed). */
  private void log(int level, String message) {
    int threshold = threshold();
    if (level > threshold) {
      return;
    }
    System.err.println("[fencing-agent] " + LEVELS[level] + (threshold >= DEBUG ? " FencingAgent:" : "") + " "
        + message);
  }

  private int threshold() {
    EarlySettings.Setting s = settings.get(EarlySettings.LOG_LEVEL);
    if (s != null) {
      String v = s.value.toUpperCase(Locale.ROOT);
      for (int i = 0; i < LEVELS.length; i++) {
        if (LEVELS[i].equals(v)) {
          return i;
        }
      }
    }
    return INFO;
  }
}
