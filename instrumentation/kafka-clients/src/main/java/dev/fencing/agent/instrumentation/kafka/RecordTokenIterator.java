package dev.fencing.agent.instrumentation.kafka;

import dev.fencing.agent.bootstrap.TokenContext;
import java.util.Iterator;

/**
 * A poll's records, each making its own lock and token ({@link RecordHeaders}) current on the polling thread while the
 * application processes it: from {@code next()} until the following {@code next()}, the end of the iteration
 * ({@code hasNext()} false) or the next poll. A record without a well-formed pair changes nothing, so the consumer's
 * writes for it follow the JVM's own lease (none with fencing.lease.enabled=false: untagged, and a fenced table
 * refuses them).
 */
final class RecordTokenIterator<T> implements Iterator<T> {
  /** The iterator whose record is being processed on this thread, so the next poll can end it. */
  private static final ThreadLocal<RecordTokenIterator<?>> CURRENT = new ThreadLocal<>();

  private final Iterator<T> records;
  private Object scope;
  private boolean processing;

  RecordTokenIterator(Iterator<T> records) {
    this.records = records;
  }

  @Override
  public boolean hasNext() {
    boolean more = records.hasNext();
    if (!more) {
      end();
    }
    return more;
  }

  @Override
  public T next() {
    endCurrent(); // this iterator's previous record, or one of an iteration left unfinished (an interceptor's)
    T record = records.next();
    String[] pair = RecordHeaders.pair(record);
    if (pair != null) {
      scope = TokenContext.enter(pair[0], pair[1], pair[2], pair[3]);
      processing = true;
      CURRENT.set(this);
    }
    return record;
  }

  @Override
  public void remove() {
    records.remove();
  }

  private void end() {
    if (processing) {
      processing = false;
      TokenContext.exit(scope);
      scope = null;
      CURRENT.remove();
    }
  }

  /** Ends the processing of the record current on this thread, if any (a new poll). */
  static void endCurrent() {
    RecordTokenIterator<?> it = CURRENT.get();
    if (it != null) {
      it.end();
    }
  }
}
