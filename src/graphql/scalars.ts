import { GraphQLScalarType } from 'graphql';
import { DateTimeResolver } from 'graphql-scalars';

/**
 * CONTRACT's `DateTime`: graphql-scalars' RFC 3339 scalar, except that it serializes to an ISO
 * string itself (the stock one hands a Date to the transport and relies on JSON.stringify).
 */
export const DateTimeScalar = new GraphQLScalarType({
  ...DateTimeResolver.toConfig(),
  serialize: (value) => DateTimeResolver.serialize(value).toISOString(),
});

/** An object of plain values (an audit entry's `before` and `after`): graphql-scalars' JSONObject. */
export { JSONObjectResolver as JSONObjectScalar } from 'graphql-scalars';
