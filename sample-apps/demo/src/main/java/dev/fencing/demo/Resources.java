package dev.fencing.demo;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Everything the demo started, closed in reverse order exactly once: at the end of the run, or by the shutdown hook
 * when the user presses Ctrl-C (a SIGSTOPped worker included: {@code AgentJvm.close} resumes it before ending it).
 */
final class Resources implements AutoCloseable {
  private final Deque<AutoCloseable> open = new ArrayDeque<>();
  private boolean closed;

  /** Registers {@code resource} and returns it; closes it at once if the demo is already shutting down. */
  synchronized <T extends AutoCloseable> T add(T resource) {
    if (closed) {
      closeQuietly(resource);
      throw new StoryBroken("interrupted: the demo is shutting down");
    }
    open.push(resource);
    return resource;
  }

  /** True once closing started (the end of the run, or Ctrl-C). */
  synchronized boolean closing() {
    return closed;
  }

  @Override
  public void close() {
    Deque<AutoCloseable> toClose;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      toClose = new ArrayDeque<>(open);
      open.clear();
    }
    for (AutoCloseable resource : toClose) {
      closeQuietly(resource);
    }
  }

  private static void closeQuietly(AutoCloseable resource) {
    try {
      resource.close();
    } catch (Exception | AssertionError e) {
      System.err.println("demo: could not stop " + resource + ": " + e);
    }
  }
}
