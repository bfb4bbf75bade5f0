package dev.fencing.agent.instrumentation.redisson;

import static dev.fencing.agent.instrumentation.api.NamedTypeInstrumentation.method;

import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.instrumentation.api.InstrumentationModule;
import dev.fencing.agent.instrumentation.api.NamedTypeInstrumentation;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import java.util.List;
import java.util.function.Consumer;

/**
 * Capture of the application's Redisson {@code RFencedLock}s (docs/DESIGN.md section 4, "Captured locks"): the fenced
 * lock's acquisition scripts report what Redis granted (the token, the lease), the blocking lock calls of
 * {@code RedissonLock} (which the fenced lock inherits) and of {@code RedissonFencedLock} report the acquiring thread,
 * {@code unlockAsync} the release and the watchdog's rounds the lease's extensions. Plain {@code RLock}s pass through
 * (nothing was recorded for them). The hook is the agent core's {@code CapturedLocks}. Switch:
 * fencing.instrumentation.redisson.enabled.
 */
public final class RedissonInstrumentationModule implements InstrumentationModule {
  /** Redisson's package, built at run time as every library name in the agent jar. */
  static final String PKG = String.join(".", "org", "redisson");

  @Override
  public String name() {
    return "redisson";
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new NamedTypeInstrumentation("Redisson", PKG + ".RedissonFencedLock", new FencedLockMethods()),
        new NamedTypeInstrumentation("Redisson", PKG + ".RedissonLock", new LockMethods()),
        new NamedTypeInstrumentation("Redisson", PKG + ".RedissonBaseLock", new BaseLockMethods()),
        new NamedTypeInstrumentation("Redisson", PKG + ".renewal.RenewalTask", new RenewalMethods()));
  }

  // The advice of each class, applied when the class loads; classes of their own rather than lambdas, which premain
  // would spin (one class each, on every start).

  /** RedissonFencedLock. */
  private static final class FencedLockMethods implements Consumer<TypeInstrumentation.Transformer> {
    @Override
    public void accept(TypeInstrumentation.Transformer t) {
      t.applyAdvice(method("tryLockInnerAsync", 3), TokenScriptAdvice.class);
      t.applyAdvice(method("tryLockInnerAsync", 5), LockScriptAdvice.class);
      t.applyAdvice(method("lockAndGetToken", 0).or(method("lockAndGetToken", 2))
          .or(method("tryLockAndGetToken", 0)).or(method("tryLockAndGetToken", 2))
          .or(method("tryLockAndGetToken", 3)), TokenReturnedAdvice.class);
    }
  }

  /** RedissonLock. */
  private static final class LockMethods implements Consumer<TypeInstrumentation.Transformer> {
    @Override
    public void accept(TypeInstrumentation.Transformer t) {
      t.applyAdvice(method("lock", 0).or(method("lock", 2)).or(method("lockInterruptibly", 0))
          .or(method("lockInterruptibly", 2)), LockReturnedAdvice.class);
      t.applyAdvice(method("tryLock", 0).or(method("tryLock", 2)).or(method("tryLock", 3)),
          TryLockReturnedAdvice.class);
    }
  }

  /** RedissonBaseLock. */
  private static final class BaseLockMethods implements Consumer<TypeInstrumentation.Transformer> {
    @Override
    public void accept(TypeInstrumentation.Transformer t) {
      t.applyAdvice(method("unlockAsync", 1), UnlockAdvice.class);
    }
  }

  /** RenewalTask. */
  private static final class RenewalMethods implements Consumer<TypeInstrumentation.Transformer> {
    @Override
    public void accept(TypeInstrumentation.Transformer t) {
      t.applyAdvice(method("execute", 0), RenewalAdvice.class);
    }
  }

  @Override
  public void install(AgentContext context) {
    // CapturedLocks is installed by the agent core for every capture.
  }
}
