package dev.fencing.agent.instrumentation.curator;

import dev.fencing.agent.bootstrap.LockLibraries;
import java.nio.ByteBuffer;
import net.bytebuddy.asm.Advice;

/**
 * An error-free reply to a ping: the server heard from this session when the ping was sent, so the session lives at
 * least a session timeout from then. The reply header (jute: int xid, long zxid, int err) is read at the buffer's
 * position with absolute reads (the client's own reading is not disturbed); pings have xid -2. Other replies are not
 * used: their send time is not kept, and a reply read late (after a pause) must not extend the deadline.
 */
public final class ReadResponseAdvice {
  private ReadResponseAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(@Advice.Argument(0) ByteBuffer reply, @Advice.FieldValue("lastPingSentNs") long pingSentAt,
      @Advice.FieldValue("this$0") Object cnxn) {
    int p = reply.position();
    if (reply.limit() - p >= 16 && reply.getInt(p) == -2 && reply.getInt(p + 12) == 0) {
      LockLibraries.zooKeeperPingAnswered(cnxn, pingSentAt);
    }
  }
}
