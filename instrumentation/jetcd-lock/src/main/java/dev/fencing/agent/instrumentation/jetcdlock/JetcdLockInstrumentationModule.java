package dev.fencing.agent.instrumentation.jetcdlock;

import static dev.fencing.agent.instrumentation.api.NamedTypeInstrumentation.method;

import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.instrumentation.api.InstrumentationModule;
import dev.fencing.agent.instrumentation.api.NamedTypeInstrumentation;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import java.util.List;
import java.util.function.Consumer;

/**
 * Capture of the application's jetcd locks and elections (docs/DESIGN.md section 4, "Captured locks"):
 * {@code LockImpl} and {@code ElectionImpl} report acquisitions (a won campaign) and releases (a resignation), {@code LeaseImpl} and its keepalive loop how long each lease is known alive. The hook is
 * the agent core's {@code CapturedLocks}. Switch: fencing.instrumentation.jetcd-lock.enabled.
 */
public final class JetcdLockInstrumentationModule implements InstrumentationModule {
  /**
   * jetcd's implementation package, built at run time: the agent jar relocates its own jetcd and, with it, every
   * string constant naming {@code io.etcd}; these must keep naming the application's classes.
   */
  static final String IMPL = String.join(".", "io", "etcd", "jetcd", "impl");

  @Override
  public String name() {
    return "jetcd-lock";
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new NamedTypeInstrumentation("jetcd", IMPL + ".LockImpl", new LockMethods()),
        new NamedTypeInstrumentation("jetcd", IMPL + ".ElectionImpl", new ElectionMethods()),
        new NamedTypeInstrumentation("jetcd", IMPL + ".LeaseImpl", new LeaseMethods()),
        new NamedTypeInstrumentation("jetcd", IMPL + ".LeaseImpl$KeepAlive", new KeepAliveMethods()));
  }

  // The advice of each class, applied when the class loads; classes of their own rather than lambdas, which premain
  // would spin (one class each, on every start).

  /** LockImpl. */
  private static final class LockMethods implements Consumer<TypeInstrumentation.Transformer> {
    @Override
    public void accept(TypeInstrumentation.Transformer t) {
      t.applyAdvice(method("lock", 2), LockAdvice.class);
      t.applyAdvice(method("unlock", 1), UnlockAdvice.class);
    }
  }

  /** ElectionImpl. */
  private static final class ElectionMethods implements Consumer<TypeInstrumentation.Transformer> {
    @Override
    public void accept(TypeInstrumentation.Transformer t) {
      t.applyAdvice(method("campaign", 3), CampaignAdvice.class);
      t.applyAdvice(method("resign", 1), ResignAdvice.class);
    }
  }

  /** LeaseImpl. */
  private static final class LeaseMethods implements Consumer<TypeInstrumentation.Transformer> {
    @Override
    public void accept(TypeInstrumentation.Transformer t) {
      t.applyAdvice(method("grant", 1).or(method("grant", 3)), GrantAdvice.class);
    }
  }

  /** LeaseImpl$KeepAlive. */
  private static final class KeepAliveMethods implements Consumer<TypeInstrumentation.Transformer> {
    @Override
    public void accept(TypeInstrumentation.Transformer t) {
      t.applyAdvice(method("sendKeepAlive", 2), SendKeepAliveAdvice.class);
      t.applyAdvice(method("handleResponse", 1), HandleResponseAdvice.class);
    }
  }

  @Override
  public void install(AgentContext context) {
    // CapturedLocks is installed by the agent core for every capture.
  }
}
