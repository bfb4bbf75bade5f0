package dev.fencing.agent.bootstrap;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What a captured jetcd {@code Lock.lock} returns instead of jetcd's own future: it completes with jetcd's response
 * once the agent has read the lock key's create revision (the token), and the thread that waits for it
 * ({@code get}, {@code join}) enters the lock's scope: the thread that asked for the lock and waits for it is the one
 * that runs the critical section. Derived stages ({@code thenApply}, ...) are plain futures.
 */
public final class CapturedLockFuture extends CompletableFuture<Object> {
  /** The lock key, once captured; null when the lock was not captured. */
  volatile String holdId;

  private void entered() {
    String id = holdId;
    if (id != null) {
      Captures.entered(id);
    }
  }

  @Override
  public Object get() throws InterruptedException, ExecutionException {
    Object r = super.get();
    entered();
    return r;
  }

  @Override
  public Object get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException, TimeoutException {
    Object r = super.get(timeout, unit);
    entered();
    return r;
  }

  @Override
  public Object join() {
    Object r = super.join();
    entered();
    return r;
  }
}
