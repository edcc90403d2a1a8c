/**
 * GraphQL inputs carry REST's fields in camelCase (CONTRACT: `aspectRatio` for `aspect_ratio`),
 * and the domain names a refused field by its REST name. The GraphQL door names it as the
 * client wrote it: `extensions.param` and the quoted name in the message both say
 * `aspectRatio`, `referenceImageUrls[1]`, so a front end can put the message beside its field.
 */
const SNAKE_PART = /_([a-z0-9])/g;

/** `reference_image_urls[1]` → `referenceImageUrls[1]`; a name without `_` is left as it is. */
export const graphqlFieldName = (restName: string): string => restName.replace(SNAKE_PART, (_all, first: string) => first.toUpperCase());

/** The param and message of a refusal, in GraphQL's names: wherever the message names the field, quoted or not. */
export function inGraphqlNames(param: string, message: string): { param: string; message: string } {
  const renamed = graphqlFieldName(param);
  if (renamed === param) return { param, message };
  const named = new RegExp(`(?<!\\w)${param.replace(/[[\]]/g, '\\$&')}(?!\\w)`, 'g');
  return { param: renamed, message: message.replace(named, renamed) };
}
