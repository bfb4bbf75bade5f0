package dev.fencing.agent.instrumentation.curator;

import dev.fencing.agent.instrumentation.AgentContext;
import dev.fencing.agent.instrumentation.InstrumentationModule;
import dev.fencing.agent.instrumentation.TypeInstrumentation;
import java.util.List;

/**
 * Capture of the application's Curator locks (docs/DESIGN.md section 4, "Captured locks"): Curator's lock core
 * ({@code LockInternals}, behind InterProcessMutex and LeaderSelector) reports acquisitions and releases, the ZooKeeper
 * client's response reader reports answered pings (how long the session is known alive). The hook is the agent core's
 * {@code CapturedLocks}, installed at startup. Switch: fencing.instrumentation.curator.enabled.
 */
public final class CuratorInstrumentationModule implements InstrumentationModule {
  @Override
  public String name() {
    return "curator";
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new LockInternalsInstrumentation(), new SendThreadInstrumentation());
  }

  @Override
  public void install(AgentContext context) {
    // CapturedLocks is installed by the agent core for every capture; nothing of this module's own to install.
  }
}
