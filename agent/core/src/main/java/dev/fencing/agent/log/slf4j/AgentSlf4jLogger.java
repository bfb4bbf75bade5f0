package dev.fencing.agent.log.slf4j;

import dev.fencing.agent.log.AgentLog;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;

/** One bundled library logger, writing through {@link AgentLog}. */
final class AgentSlf4jLogger extends LegacyAbstractLogger {
  private static final long serialVersionUID = 1L;
  private final transient AgentLog log = AgentLog.get(AgentSlf4jLogger.class);

  AgentSlf4jLogger(String name) {
    this.name = name;
  }

  @Override
  public boolean isTraceEnabled() {
    return false;
  }

  @Override
  public boolean isDebugEnabled() {
    return AgentLog.enabled(AgentLog.Level.TRACE);
  }

  @Override
  public boolean isInfoEnabled() {
    return AgentLog.enabled(AgentLog.Level.TRACE); // library INFO and DEBUG only at trace: keep the host's stderr quiet
  }

  @Override
  public boolean isWarnEnabled() {
    return AgentLog.enabled(AgentLog.Level.WARN);
  }

  @Override
  public boolean isErrorEnabled() {
    return AgentLog.enabled(AgentLog.Level.ERROR);
  }

  @Override
  protected String getFullyQualifiedCallerName() {
    return null;
  }

  @Override
  protected void handleNormalizedLoggingCall(Level level, Marker marker, String pattern, Object[] args, Throwable t) {
    String msg = name + ": " + MessageFormatter.basicArrayFormat(pattern, args);
    switch (level) {
      case ERROR:
        log.error(msg, t);
        break;
      case WARN:
        log.warn(msg, t);
        break;
      default:
        log.trace(t == null ? msg : msg + ": " + AgentLog.describe(t));
    }
  }
}
