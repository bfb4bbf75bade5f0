package dev.fencing.agent.log.slf4j;

import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.helpers.NOPMDCAdapter;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * Routes the bundled libraries' SLF4J logging (jetcd, Netty, Vert.x) into the agent log, warnings and errors only
 * (debug with fencing.log.level=debug). Bundled and relocated with slf4j-api, so it never meets the application's
 * SLF4J.
 */
public final class AgentSlf4jProvider implements SLF4JServiceProvider {
  private final ILoggerFactory factory = AgentSlf4jLogger::new;
  private final IMarkerFactory markers = new BasicMarkerFactory();
  private final MDCAdapter mdc = new NOPMDCAdapter();

  @Override
  public ILoggerFactory getLoggerFactory() {
    return factory;
  }

  @Override
  public IMarkerFactory getMarkerFactory() {
    return markers;
  }

  @Override
  public MDCAdapter getMDCAdapter() {
    return mdc;
  }

  @Override
  public String getRequestedApiVersion() {
    return "2.0.99";
  }

  @Override
  public void initialize() {}
}
