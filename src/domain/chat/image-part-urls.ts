/**
 * The web addresses of a chat call's image parts pass the same check as every other URL a caller
 * hands in (video `image_url`, webhooks): the gateway never fetches them itself, but the model
 * provider does, and a provider that runs in the operator's own network (a self-hosted
 * compatible server) would fetch a loopback, private or cloud-metadata address on the caller's
 * behalf. `data:` URLs carry the image itself and are not addresses.
 */
import type { UrlGuard } from '../ports/url-guard';
import type { ChatMessage } from './chat-port';

/** Checks each image part's http(s) URL, in order, naming the first refused one (`messages[i].content[j].image_url.url`); keeps the normalised form. */
export async function checkImagePartUrls(messages: ChatMessage[], urls: UrlGuard): Promise<void> {
  for (let i = 0; i < messages.length; i++) {
    const content = messages[i].content;
    if (!Array.isArray(content)) continue;
    for (let j = 0; j < content.length; j++) {
      const part = content[j];
      if (part.type !== 'image_url' || part.image_url.url.startsWith('data:')) continue;
      part.image_url.url = await urls.checkMediaUrl(part.image_url.url, ['messages', i, 'content', j, 'image_url', 'url']);
    }
  }
}
